import type { Queryable } from '../../db/database.ts';
import type { AnalyzedMemory } from './analyzer.ts';
import { blockCapacity, packBlocks, withoutPosting, type Posting } from './postings.ts';

export interface MemoryRow {
  id: string;
  seq: number;
  organization_id: string | null;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  created_at: Date;
  updated_at: Date;
  version: number;
  updated_by: string | null;
  expires_at: Date | null;
  occurred_at: Date | null;
  speaker: string | null;
  superseded_by: string | null;
}

export interface NewMemory {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  analyzed: AnalyzedMemory;
  contentKey?: string | null;
  expiresAt?: Date | null;
  occurredAt?: Date | null;
  speaker?: string | null;
  /** Set when a changed memory is written again under its id: what it keeps of its earlier row. */
  kept?: { createdAt: Date; version: number; updatedBy: string; supersededBy: string | null };
}

export interface BankKey {
  userId: string;
  organizationId: string | null;
}

/** A bank is found by its user (the distribution column of every memory table) and its id. */
export interface BankRef {
  userId: string;
  id: number;
}

export interface BankStats extends BankRef {
  docCount: number;
  headLengthSum: number;
  bodyLengthSum: number;
}

export const memoryColumns =
  'm.id, m.seq, m.organization_id, m.content, m.tags, m.source, m.scope, m.created_at, m.updated_at, ' +
  'm.version, m.updated_by, m.expires_at, m.occurred_at, m.speaker, m.superseded_by';
/** A memory is live (seen by get, list, search, change) until it expires; the pruning worker deletes it later. */
export const liveMemory = '(m.expires_at IS NULL OR m.expires_at > now())';
export const orgKey = (organizationId: string | null) => organizationId ?? '';

/** The bank's id, or undefined when the user has never written a memory there. */
export async function findBank(db: Queryable, key: BankKey): Promise<BankStats | undefined> {
  const { rows } = await db.query<{ id: number; doc_count: number; head_length_sum: number; body_length_sum: number }>(
    'SELECT id, doc_count, head_length_sum, body_length_sum FROM memory_banks WHERE user_id = $1 AND org_key = $2',
    [key.userId, orgKey(key.organizationId)],
  );
  const row = rows[0];
  return (
    row && {
      userId: key.userId,
      id: row.id,
      docCount: row.doc_count,
      headLengthSum: row.head_length_sum,
      bodyLengthSum: row.body_length_sum,
    }
  );
}

/**
 * Inserts memories with their postings and adds them to the bank's statistics, in the caller's
 * transaction. The bank row is created or updated first: its row lock orders every writer of the
 * bank, so the counts stay exact when creates and deletes race.
 */
export async function insertMemories(tx: Queryable, key: BankKey, memories: NewMemory[]): Promise<MemoryRow[]> {
  let headSum = 0;
  let bodySum = 0;
  for (const memory of memories) {
    headSum += memory.analyzed.headLength;
    bodySum += memory.analyzed.bodyLength;
  }
  const bank = await tx.query<{ id: number }>(
    `INSERT INTO memory_banks (user_id, org_key, organization_id, doc_count, head_length_sum, body_length_sum)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (user_id, org_key) DO UPDATE SET
       doc_count = memory_banks.doc_count + EXCLUDED.doc_count,
       head_length_sum = memory_banks.head_length_sum + EXCLUDED.head_length_sum,
       body_length_sum = memory_banks.body_length_sum + EXCLUDED.body_length_sum
     RETURNING id`,
    [key.userId, orgKey(key.organizationId), key.organizationId, memories.length, headSum, bodySum],
  );
  const bankId = bank.rows[0]!.id;

  // Arrays of arrays cannot be unnested per row, so each memory's lists travel as one string:
  // terms are letter/digit runs (no spaces), frequencies are numbers, and tags cannot contain a
  // comma (the schema refuses it), so a separator splits each back without ambiguity.
  const inserted = await tx.query<MemoryRow>(
    `INSERT INTO memories AS m (id, bank_id, user_id, organization_id, content, tags, source, scope,
                                terms, head_tf, body_tf, head_length, body_length,
                                content_key, expires_at, occurred_at, speaker, created_at, updated_at, version, updated_by, superseded_by)
     SELECT v.id, $1, $2, $3, v.content, string_to_array(v.tags, ','), v.source, v.scope,
            string_to_array(v.terms, ' '), string_to_array(v.head_tf, ' ')::integer[], string_to_array(v.body_tf, ' ')::integer[],
            v.head_length, v.body_length, v.content_key, v.expires_at, v.occurred_at, v.speaker,
            coalesce(v.created_at, now()), now(), coalesce(v.version, 1), v.updated_by, v.superseded_by
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                   $12::integer[], $13::integer[], $14::text[], $15::timestamptz[], $16::timestamptz[], $17::text[],
                   $18::timestamptz[], $19::integer[], $20::text[], $21::text[])
            AS v(id, content, tags, source, scope, terms, head_tf, body_tf, head_length, body_length,
                 content_key, expires_at, occurred_at, speaker, created_at, version, updated_by, superseded_by)
     RETURNING ${memoryColumns}`,
    [
      bankId,
      key.userId,
      key.organizationId,
      memories.map((memory) => memory.id),
      memories.map((memory) => memory.content),
      memories.map((memory) => memory.tags.join(',')),
      memories.map((memory) => memory.source),
      memories.map((memory) => memory.scope),
      memories.map((memory) => memory.analyzed.terms.join(' ')),
      memories.map((memory) => memory.analyzed.headTf.join(' ')),
      memories.map((memory) => memory.analyzed.bodyTf.join(' ')),
      memories.map((memory) => memory.analyzed.headLength),
      memories.map((memory) => memory.analyzed.bodyLength),
      memories.map((memory) => memory.contentKey ?? null),
      memories.map((memory) => memory.expiresAt ?? null),
      memories.map((memory) => memory.occurredAt ?? null),
      memories.map((memory) => memory.speaker ?? null),
      memories.map((memory) => memory.kept?.createdAt ?? null),
      memories.map((memory) => memory.kept?.version ?? null),
      memories.map((memory) => memory.kept?.updatedBy ?? null),
      memories.map((memory) => memory.kept?.supersededBy ?? null),
    ],
  );
  const seqById = new Map(inserted.rows.map((row) => [row.id, row.seq]));

  // Postings in key order (term, then memory): each term's new postings become one or more packed
  // blocks; the first is appended to the term's last stored block when both fit in one.
  const postings: { term: string; posting: Posting }[] = [];
  for (const memory of memories) {
    const seq = seqById.get(memory.id)!;
    const a = memory.analyzed;
    for (let i = 0; i < a.terms.length; i++) {
      postings.push({
        term: a.terms[i]!,
        posting: {
          seq,
          headTf: a.headTf[i]!,
          bodyTf: a.bodyTf[i]!,
          headLength: a.headLength,
          bodyLength: a.bodyLength,
        },
      });
    }
  }
  postings.sort((x, y) => (x.term < y.term ? -1 : x.term > y.term ? 1 : x.posting.seq - y.posting.seq));
  const blocks = packBlocks(postings);
  if (blocks.length > 0) {
    // One statement: append to last blocks that have room, insert the other blocks, count the
    // document frequencies. The new memories' sequence numbers are above every stored one of the
    // bank (writers of a bank hold its row lock, taken above, while inserting), so appended
    // postings stay in order and blocks never overlap; the last_seq check keeps that true anyway.
    await tx.query(
      `WITH n AS (
         SELECT * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::integer[], $6::integer[], $7::integer[],
                              $8::integer[], $9::integer[], $10::bytea[], $11::boolean[])
           AS n(term, first_seq, last_seq, postings, max_head_tf, max_body_tf, min_head_length, min_body_length, data, mergeable)
       ),
       -- Every row of \`tail\` is one probe of the primary key (LATERAL ... LIMIT 1) and carries what
       -- the update needs, so the update joins each block to exactly one row by its key.
       tail AS (
         SELECT n.*, last.first_seq AS block_first_seq
           FROM n CROSS JOIN LATERAL (
             SELECT b.first_seq, b.last_seq, b.postings FROM memory_blocks b
              WHERE b.user_id = $13 AND b.bank_id = $1 AND b.term = n.term ORDER BY b.first_seq DESC LIMIT 1
           ) last
          WHERE n.mergeable AND last.postings + n.postings <= $12 AND last.last_seq < n.first_seq
       ),
       merged AS (
         UPDATE memory_blocks b
            SET last_seq = tail.last_seq, postings = b.postings + tail.postings,
                max_head_tf = greatest(b.max_head_tf, tail.max_head_tf), max_body_tf = greatest(b.max_body_tf, tail.max_body_tf),
                min_head_length = least(b.min_head_length, tail.min_head_length), min_body_length = least(b.min_body_length, tail.min_body_length),
                data = b.data || tail.data
           FROM tail
          WHERE b.user_id = $13 AND b.bank_id = $1 AND b.term = tail.term AND b.first_seq = tail.block_first_seq
         RETURNING b.term
       ),
       added AS (
         INSERT INTO memory_blocks (user_id, bank_id, term, first_seq, last_seq, postings, max_head_tf, max_body_tf, min_head_length, min_body_length, data)
         SELECT $13, $1, n.term, n.first_seq, n.last_seq, n.postings, n.max_head_tf, n.max_body_tf, n.min_head_length, n.min_body_length, n.data
           FROM n WHERE NOT (n.mergeable AND n.term IN (SELECT term FROM merged))
       )
       INSERT INTO memory_terms AS t (user_id, bank_id, term, df)
       SELECT $13, $1, n.term, sum(n.postings) FROM n GROUP BY n.term
       ON CONFLICT (user_id, bank_id, term) DO UPDATE SET df = t.df + EXCLUDED.df`,
      [
        bankId,
        blocks.map((b) => b.term),
        blocks.map((b) => b.firstSeq),
        blocks.map((b) => b.lastSeq),
        blocks.map((b) => b.postings),
        blocks.map((b) => b.maxHeadTf),
        blocks.map((b) => b.maxBodyTf),
        blocks.map((b) => b.minHeadLength),
        blocks.map((b) => b.minBodyLength),
        blocks.map((b) => b.data),
        blocks.map((b) => b.mergeable),
        blockCapacity,
        key.userId,
      ],
    );
  }
  // Rows come back in insertion order on both backends, but the caller's order is the contract.
  const byId = new Map(inserted.rows.map((row) => [row.id, row]));
  return memories.map((memory) => byId.get(memory.id)!);
}

/**
 * Deletes one memory of the bank with its postings and takes it out of the statistics (its earlier
 * versions go by the foreign key's cascade).
 * Returns false when the bank has no such memory.
 */
export async function deleteMemory(
  tx: Queryable,
  key: BankKey,
  id: string,
  how: { onlyLive: boolean } = { onlyLive: true },
): Promise<boolean> {
  const deleted = await tx.query<{
    bank_id: number;
    seq: number;
    terms: string[];
    head_length: number;
    body_length: number;
  }>(
    `DELETE FROM memories m USING memory_banks b
      WHERE m.user_id = $2 AND m.id = $1 AND b.user_id = m.user_id AND b.id = m.bank_id AND b.org_key = $3
        ${how.onlyLive ? `AND ${liveMemory}` : ''}
      RETURNING m.bank_id, m.seq, m.terms, m.head_length, m.body_length`,
    [id, key.userId, orgKey(key.organizationId)],
  );
  const row = deleted.rows[0];
  if (!row) return false;
  // The bank row first, as every writer of the bank does: it orders them (no deadlock on the counters).
  await tx.query(
    `UPDATE memory_banks SET doc_count = doc_count - 1, head_length_sum = head_length_sum - $2, body_length_sum = body_length_sum - $3
      WHERE user_id = $4 AND id = $1`,
    [row.bank_id, row.head_length, row.body_length, key.userId],
  );
  await removePostings(tx, { userId: key.userId, id: row.bank_id }, row.terms, row.seq);
  const sortedTerms = [...row.terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await tx.query('UPDATE memory_terms SET df = df - 1 WHERE user_id = $3 AND bank_id = $1 AND term = ANY($2::text[])', [
    row.bank_id,
    sortedTerms,
    key.userId,
  ]);
  await tx.query(
    'DELETE FROM memory_terms WHERE user_id = $3 AND bank_id = $1 AND term = ANY($2::text[]) AND df <= 0',
    [row.bank_id, sortedTerms, key.userId],
  );
  return true;
}

export async function getMemory(db: Queryable, key: BankKey, id: string): Promise<MemoryRow | undefined> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${memoryColumns} FROM memories m JOIN memory_banks b ON b.user_id = m.user_id AND b.id = m.bank_id
      WHERE m.user_id = $2 AND m.id = $1 AND b.org_key = $3 AND ${liveMemory}`,
    [id, key.userId, orgKey(key.organizationId)],
  );
  return rows[0];
}

/** Newest first; `after` is the (createdAt, id) of the last memory of the previous page. */
export async function listMemories(
  db: Queryable,
  bank: BankRef,
  limit: number,
  after: { createdAt: string; id: string } | undefined,
): Promise<(MemoryRow & { created_at_exact: string })[]> {
  const params: unknown[] = [bank.id, limit, bank.userId];
  let where = `m.user_id = $3 AND m.bank_id = $1 AND ${liveMemory}`;
  if (after) {
    params.push(after.createdAt, after.id);
    where += ' AND (m.created_at, m.id) < ($4::timestamptz, $5)';
  }
  // created_at_exact keeps the microseconds a JS Date would drop, for the next page's cursor.
  const { rows } = await db.query<MemoryRow & { created_at_exact: string }>(
    `SELECT ${memoryColumns}, m.created_at::text AS created_at_exact
       FROM memories m WHERE ${where} ORDER BY m.created_at DESC, m.id DESC LIMIT $2`,
    params,
  );
  return rows;
}

/**
 * Takes the posting of memory `seq` out of the blocks of its terms (a block left empty is
 * deleted), in the caller's transaction, after the bank row is locked. Each term's block is the
 * last one starting at or before `seq`; a term whose posting is not there (blocks never overlap,
 * so this does not happen) is looked for in every block whose range covers `seq`.
 */
async function removePostings(tx: Queryable, bank: BankRef, terms: string[], seq: number): Promise<void> {
  const { rows: candidates } = await tx.query<{ term: string; first_seq: number; data: Buffer }>(
    `SELECT t.term, b.first_seq, b.data
       FROM unnest($2::text[]) AS t(term)
       CROSS JOIN LATERAL (
         SELECT first_seq, last_seq, data FROM memory_blocks
          WHERE user_id = $4 AND bank_id = $1 AND term = t.term AND first_seq <= $3 ORDER BY first_seq DESC LIMIT 1
       ) b`,
    [bank.id, terms, seq, bank.userId],
  );
  const changed: { term: string; first_seq: number; data: Buffer }[] = [];
  const found = new Set<string>();
  const take = (block: { term: string; first_seq: number; data: Buffer }) => {
    const data = withoutPosting(block.data, seq);
    if (data === block.data) return;
    changed.push({ term: block.term, first_seq: block.first_seq, data });
    found.add(block.term);
  };
  candidates.forEach(take);
  const missing = terms.filter((term) => !found.has(term));
  if (missing.length > 0) {
    const { rows } = await tx.query<{ term: string; first_seq: number; data: Buffer }>(
      'SELECT term, first_seq, data FROM memory_blocks WHERE user_id = $4 AND bank_id = $1 AND term = ANY($2::text[]) AND first_seq <= $3 AND last_seq >= $3',
      [bank.id, missing, seq, bank.userId],
    );
    rows.forEach(take);
  }
  if (changed.length === 0) return;
  await tx.query(
    `WITH c AS (SELECT * FROM unnest($2::text[], $3::bigint[], $4::bytea[]) AS c(term, first_seq, data)),
     emptied AS (
       DELETE FROM memory_blocks b USING c
        WHERE b.user_id = $5 AND b.bank_id = $1 AND b.term = c.term AND b.first_seq = c.first_seq AND length(c.data) = 0
     )
     UPDATE memory_blocks b SET data = c.data, postings = b.postings - 1
       FROM c WHERE b.user_id = $5 AND b.bank_id = $1 AND b.term = c.term AND b.first_seq = c.first_seq AND length(c.data) > 0`,
    [bank.id, changed.map((c) => c.term), changed.map((c) => c.first_seq), changed.map((c) => c.data), bank.userId],
  );
}
