// SQL of a memory's lifecycle: the bank's lock before a write that reads first, same-content lookups,
// earlier versions, supersession and the expired memories the pruning worker deletes. Split from
// store.ts, which inserts, deletes and lists.
import type { Queryable } from '../../db/database.ts';
import { liveMemory, memoryColumns, orgKey, type BankKey, type MemoryRow } from './store.ts';

/**
 * Locks the bank's row until the transaction ends (undefined when the user has no bank here), so the
 * reads that decide a write (is this content already there? which memory is superseded?) hold until
 * it commits: every writer of a bank takes this lock first.
 */
export async function lockBank(tx: Queryable, key: BankKey): Promise<number | undefined> {
  const { rows } = await tx.query<{ id: number }>(
    'SELECT id FROM memory_banks WHERE user_id = $1 AND org_key = $2 FOR UPDATE',
    [key.userId, orgKey(key.organizationId)],
  );
  return rows[0]?.id;
}

/** The live, not superseded memories of the bank whose content key is one of `keys`, oldest first. */
export async function findByContentKeys(
  tx: Queryable,
  key: BankKey,
  bankId: number,
  keys: string[],
): Promise<(MemoryRow & { content_key: string })[]> {
  const { rows } = await tx.query<MemoryRow & { content_key: string }>(
    `SELECT ${memoryColumns}, m.content_key FROM memories m
      WHERE m.user_id = $1 AND m.bank_id = $2 AND m.content_key = ANY($3::text[])
        AND m.superseded_by IS NULL AND ${liveMemory}
      ORDER BY m.created_at, m.id`,
    [key.userId, bankId, keys],
  );
  return rows;
}

/** A live memory of the bank, row-locked until the transaction ends, with what a change needs of it. */
export async function lockMemory(tx: Queryable, key: BankKey, id: string): Promise<MemoryRow | undefined> {
  const { rows } = await tx.query<MemoryRow>(
    `SELECT ${memoryColumns} FROM memories m JOIN memory_banks b ON b.user_id = m.user_id AND b.id = m.bank_id
      WHERE m.user_id = $1 AND m.id = $2 AND b.org_key = $3 AND ${liveMemory}
      FOR UPDATE OF m`,
    [key.userId, id, orgKey(key.organizationId)],
  );
  return rows[0];
}

/** An earlier version as stored. */
export interface StoredVersion {
  version: number;
  content: string;
  tags: string[];
  expires_at: Date | null;
  occurred_at: Date | null;
  speaker: string | null;
  changed_at: Date;
  changed_by: string;
}

/** The memory's current state as an earlier version: what is kept before it changes. */
export function asVersion(userId: string, row: MemoryRow): StoredVersion {
  return {
    version: row.version,
    content: row.content,
    tags: row.tags,
    expires_at: row.expires_at,
    occurred_at: row.occurred_at,
    speaker: row.speaker,
    changed_at: row.updated_at,
    changed_by: row.updated_by ?? userId,
  };
}

/**
 * Deletes a memory's earlier versions and returns them whole: a change of content re-inserts the
 * memory's row, which the versions' foreign key would take them with (ON DELETE CASCADE), so the
 * change takes them first and puts them back with putVersions once the row is there again.
 */
export async function takeVersions(tx: Queryable, userId: string, id: string): Promise<StoredVersion[]> {
  const { rows } = await tx.query<StoredVersion>(
    `DELETE FROM memory_versions WHERE user_id = $1 AND memory_id = $2
      RETURNING version, content, tags, expires_at, occurred_at, speaker, changed_at, changed_by`,
    [userId, id],
  );
  return rows;
}

export async function putVersions(tx: Queryable, userId: string, id: string, versions: StoredVersion[]): Promise<void> {
  if (versions.length === 0) return;
  // Tags cannot contain a comma (the schema refuses it), so each version's tags travel as one string.
  await tx.query(
    `INSERT INTO memory_versions (user_id, memory_id, version, content, tags, expires_at, occurred_at, speaker, changed_at, changed_by)
     SELECT $1, $2, v.version, v.content, string_to_array(v.tags, ','), v.expires_at, v.occurred_at, v.speaker, v.changed_at, v.changed_by
       FROM unnest($3::integer[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::text[], $9::timestamptz[], $10::text[])
            AS v(version, content, tags, expires_at, occurred_at, speaker, changed_at, changed_by)`,
    [
      userId,
      id,
      versions.map((v) => v.version),
      versions.map((v) => v.content),
      versions.map((v) => v.tags.join(',')),
      versions.map((v) => v.expires_at),
      versions.map((v) => v.occurred_at),
      versions.map((v) => v.speaker),
      versions.map((v) => v.changed_at),
      versions.map((v) => v.changed_by),
    ],
  );
}

/** A change that leaves the content (and so the postings) as it was. */
export async function updateFields(
  tx: Queryable,
  userId: string,
  id: string,
  fields: { tags: string[]; expiresAt: Date | null; occurredAt: Date | null; speaker: string | null; by: string },
): Promise<MemoryRow> {
  const { rows } = await tx.query<MemoryRow>(
    `UPDATE memories m SET tags = $3, expires_at = $4, occurred_at = $5, speaker = $6, updated_by = $7,
            version = m.version + 1, updated_at = now()
      WHERE m.user_id = $1 AND m.id = $2
      RETURNING ${memoryColumns}`,
    [userId, id, fields.tags, fields.expiresAt, fields.occurredAt, fields.speaker, fields.by],
  );
  return rows[0]!;
}

export async function markSuperseded(tx: Queryable, userId: string, id: string, by: string): Promise<void> {
  await tx.query('UPDATE memories SET superseded_by = $3 WHERE user_id = $1 AND id = $2', [userId, id, by]);
}

export interface VersionRow {
  version: number;
  content: string;
  tags: string[];
  changed_at: Date;
  changed_by: string;
}

/** The earlier versions of a memory, oldest first. */
export async function listVersions(db: Queryable, userId: string, id: string): Promise<VersionRow[]> {
  const { rows } = await db.query<VersionRow>(
    `SELECT version, content, tags, changed_at, changed_by FROM memory_versions
      WHERE user_id = $1 AND memory_id = $2 ORDER BY version`,
    [userId, id],
  );
  return rows;
}

/**
 * Up to `limit` memories past their expiry, of every user: the pruning worker's work. The one
 * statement of this module that spans users (on Citus it reads every node); it reads the partial
 * index of memories that expire.
 */
export async function findExpired(
  db: Queryable,
  limit: number,
): Promise<{ user_id: string; organization_id: string | null; id: string }[]> {
  const { rows } = await db.query<{ user_id: string; organization_id: string | null; id: string }>(
    `SELECT m.user_id, m.organization_id, m.id FROM memories m
      WHERE m.expires_at IS NOT NULL AND m.expires_at <= now() ORDER BY m.expires_at LIMIT $1`,
    [limit],
  );
  return rows;
}
