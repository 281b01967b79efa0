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

/** Keeps the memory's current state as an earlier version, before it changes. */
export async function keepVersion(tx: Queryable, userId: string, row: MemoryRow): Promise<void> {
  await tx.query(
    `INSERT INTO memory_versions (user_id, memory_id, version, content, tags, expires_at, occurred_at, speaker, changed_at, changed_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      userId,
      row.id,
      row.version,
      row.content,
      row.tags,
      row.expires_at,
      row.occurred_at,
      row.speaker,
      row.updated_at,
      row.updated_by ?? userId,
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
