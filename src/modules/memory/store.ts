import type { Queryable } from '../../db/database.ts';
import type { AnalyzedMemory } from './analyzer.ts';

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
}

export interface NewMemory {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  analyzed: AnalyzedMemory;
}

export interface BankKey {
  userId: string;
  organizationId: string | null;
}

export interface BankStats {
  id: number;
  docCount: number;
  headLengthSum: number;
  bodyLengthSum: number;
}

const memoryColumns = 'm.id, m.seq, m.organization_id, m.content, m.tags, m.source, m.scope, m.created_at, m.updated_at';
const orgKey = (organizationId: string | null) => organizationId ?? '';

/** The bank's id, or undefined when the user has never written a memory there. */
export async function findBank(db: Queryable, key: BankKey): Promise<BankStats | undefined> {
  const { rows } = await db.query<{ id: number; doc_count: number; head_length_sum: number; body_length_sum: number }>(
    'SELECT id, doc_count, head_length_sum, body_length_sum FROM memory_banks WHERE user_id = $1 AND org_key = $2',
    [key.userId, orgKey(key.organizationId)],
  );
  const row = rows[0];
  return row && { id: row.id, docCount: row.doc_count, headLengthSum: row.head_length_sum, bodyLengthSum: row.body_length_sum };
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
                                terms, head_tf, body_tf, head_length, body_length)
     SELECT v.id, $1, $2, $3, v.content, string_to_array(v.tags, ','), v.source, v.scope,
            string_to_array(v.terms, ' '), string_to_array(v.head_tf, ' ')::integer[], string_to_array(v.body_tf, ' ')::integer[],
            v.head_length, v.body_length
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                   $12::integer[], $13::integer[])
            AS v(id, content, tags, source, scope, terms, head_tf, body_tf, head_length, body_length)
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
    ],
  );
  const seqById = new Map(inserted.rows.map((row) => [row.id, row.seq]));

  // Postings as parallel arrays: one round trip however many terms the batch has.
  const terms: string[] = [];
  const seqs: number[] = [];
  const headTf: number[] = [];
  const bodyTf: number[] = [];
  const headLength: number[] = [];
  const bodyLength: number[] = [];
  const postings: { term: string; seq: number; head: number; body: number; headLength: number; bodyLength: number }[] = [];
  for (const memory of memories) {
    const seq = seqById.get(memory.id)!;
    const a = memory.analyzed;
    for (let i = 0; i < a.terms.length; i++) {
      postings.push({ term: a.terms[i]!, seq, head: a.headTf[i]!, body: a.bodyTf[i]!, headLength: a.headLength, bodyLength: a.bodyLength });
    }
  }
  // In key order (bytewise, like the index's COLLATE "C"): neighbouring inserts land on the same
  // index pages, which is several times faster than a random order for large batches.
  postings.sort((x, y) => (x.term < y.term ? -1 : x.term > y.term ? 1 : x.seq - y.seq));
  for (const p of postings) {
    terms.push(p.term);
    seqs.push(p.seq);
    headTf.push(p.head);
    bodyTf.push(p.body);
    headLength.push(p.headLength);
    bodyLength.push(p.bodyLength);
  }
  if (terms.length > 0) {
    await tx.query(
      `INSERT INTO memory_postings (bank_id, term, memory_seq, head_tf, body_tf, head_length, body_length)
       SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::integer[], $5::integer[], $6::integer[], $7::integer[])`,
      [bankId, terms, seqs, headTf, bodyTf, headLength, bodyLength],
    );
    // Document frequencies: the postings are sorted by term, so counting runs of equal terms is enough.
    const distinct: string[] = [];
    const counts: number[] = [];
    for (const term of terms) {
      if (distinct[distinct.length - 1] === term) counts[counts.length - 1]! += 1;
      else {
        distinct.push(term);
        counts.push(1);
      }
    }
    await tx.query(
      `INSERT INTO memory_terms AS t (bank_id, term, df)
       SELECT $1, * FROM unnest($2::text[], $3::bigint[])
       ON CONFLICT (bank_id, term) DO UPDATE SET df = t.df + EXCLUDED.df`,
      [bankId, distinct, counts],
    );
  }
  // Rows come back in insertion order on both backends, but the caller's order is the contract.
  const byId = new Map(inserted.rows.map((row) => [row.id, row]));
  return memories.map((memory) => byId.get(memory.id)!);
}

/**
 * Deletes one memory of the bank with its postings and takes it out of the statistics.
 * Returns false when the bank has no such memory.
 */
export async function deleteMemory(tx: Queryable, key: BankKey, id: string): Promise<boolean> {
  const deleted = await tx.query<{ bank_id: number; seq: number; terms: string[]; head_length: number; body_length: number }>(
    `DELETE FROM memories m USING memory_banks b
      WHERE m.id = $1 AND m.bank_id = b.id AND b.user_id = $2 AND b.org_key = $3
      RETURNING m.bank_id, m.seq, m.terms, m.head_length, m.body_length`,
    [id, key.userId, orgKey(key.organizationId)],
  );
  const row = deleted.rows[0];
  if (!row) return false;
  // The bank row first, as every writer of the bank does: it orders them (no deadlock on the counters).
  await tx.query(
    `UPDATE memory_banks SET doc_count = doc_count - 1, head_length_sum = head_length_sum - $2, body_length_sum = body_length_sum - $3
      WHERE id = $1`,
    [row.bank_id, row.head_length, row.body_length],
  );
  await tx.query('DELETE FROM memory_postings WHERE bank_id = $1 AND term = ANY($2::text[]) AND memory_seq = $3', [
    row.bank_id,
    row.terms,
    row.seq,
  ]);
  const sortedTerms = [...row.terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await tx.query('UPDATE memory_terms SET df = df - 1 WHERE bank_id = $1 AND term = ANY($2::text[])', [row.bank_id, sortedTerms]);
  await tx.query('DELETE FROM memory_terms WHERE bank_id = $1 AND term = ANY($2::text[]) AND df <= 0', [row.bank_id, sortedTerms]);
  return true;
}

export async function getMemory(db: Queryable, key: BankKey, id: string): Promise<MemoryRow | undefined> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${memoryColumns} FROM memories m JOIN memory_banks b ON b.id = m.bank_id
      WHERE m.id = $1 AND b.user_id = $2 AND b.org_key = $3`,
    [id, key.userId, orgKey(key.organizationId)],
  );
  return rows[0];
}

/** Newest first; `after` is the (createdAt, id) of the last memory of the previous page. */
export async function listMemories(
  db: Queryable,
  bankId: number,
  limit: number,
  after: { createdAt: string; id: string } | undefined,
): Promise<(MemoryRow & { created_at_exact: string })[]> {
  const params: unknown[] = [bankId, limit];
  let where = 'm.bank_id = $1';
  if (after) {
    params.push(after.createdAt, after.id);
    where += ' AND (m.created_at, m.id) < ($3::timestamptz, $4)';
  }
  // created_at_exact keeps the microseconds a JS Date would drop, for the next page's cursor.
  const { rows } = await db.query<MemoryRow & { created_at_exact: string }>(
    `SELECT ${memoryColumns}, m.created_at::text AS created_at_exact
       FROM memories m WHERE ${where} ORDER BY m.created_at DESC, m.id DESC LIMIT $2`,
    params,
  );
  return rows;
}

/** How many memories of the bank contain each term (document frequency), in the caller's snapshot. */
export async function documentFrequencies(db: Queryable, bankId: number, terms: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ term: string; df: number }>(
    'SELECT term, df FROM memory_terms WHERE bank_id = $1 AND term = ANY($2::text[]) AND df > 0',
    [bankId, terms],
  );
  return new Map(rows.map((row) => [row.term, row.df]));
}

export interface RankingQuery {
  bankId: number;
  /** The query's terms and, per term, the factor (query weight x idf x (k1 + 1)) computed by the caller. */
  terms: string[];
  factors: number[];
  /** Per term: whether it is one of the query's own words. Only memories with one of those are candidates. */
  original: boolean[];
  /**
   * Per term: whether it is essential. Memories that contain no essential term are not scored at
   * all (the caller knows they cannot reach the top, or re-runs with every term essential).
   */
  essential: boolean[];
  k1: number;
  headWeight: number;
  headB: number;
  bodyB: number;
  avgHeadLength: number;
  avgBodyLength: number;
  limit: number;
  /** Also return each result's term vector (the feedback pass needs them; saves a round trip). */
  withVectors?: boolean;
  tags?: string[] | undefined;
  source?: string | undefined;
  scope?: string | undefined;
}

export interface ScoredRow extends MemoryRow {
  /** The score in units of 1e-9: integer so that its sum is exact and the same on every backend. */
  score_units: number;
  /** With `withVectors`: the stored analysis of the memory. */
  terms?: string[];
  head_tf?: number[];
  body_tf?: number[];
  head_length?: number;
  body_length?: number;
}

/** Scores are summed as integers of this many units per point. */
export const scoreUnitsPerPoint = 1e9;

/**
 * BM25F over the bank's postings: a memory that contains any query term is a candidate. Per term,
 * the pseudo-frequency is the headline frequency (weighted, length-normalized against the bank's
 * average headline) plus the body frequency (length-normalized against the average body); the
 * term's contribution is factor x f / (f + k1). Contributions are rounded to whole units before
 * summing: float addition of fractions depends on the order rows arrive in, addition of whole
 * numbers below 2^53 is exact in any order, so both backends give the same scores and the same
 * order. (They stay float8: sum(bigint) would be numeric, several times slower.)
 */
export async function rankMemories(db: Queryable, q: RankingQuery): Promise<ScoredRow[]> {
  const { params, filters, scored, candidates } = rankingParts(q, false);
  const columns = q.withVectors ? `${memoryColumns}, m.terms, m.head_tf, m.body_tf, m.head_length, m.body_length` : memoryColumns;
  let sql: string;
  if (filters.length === 0) {
    // Only memories that can be in the top `limit` are joined: those scoring at least the
    // limit-th best score (ties at the boundary are then ordered by updatedAt).
    sql = `
      WITH ${candidates} s AS MATERIALIZED (${scored}),
           cut AS (SELECT score_units FROM s ORDER BY score_units DESC OFFSET $10 - 1 LIMIT 1)
      SELECT ${columns}, s.score_units
        FROM s JOIN memories m ON m.seq = s.memory_seq
       WHERE s.score_units >= coalesce((SELECT score_units FROM cut), 0)
       ORDER BY s.score_units DESC, m.updated_at DESC, m.id DESC
       LIMIT $10`;
  } else {
    sql = `
      WITH ${candidates} s AS MATERIALIZED (${scored})
      SELECT ${columns}, s.score_units
        FROM s JOIN memories m ON m.seq = s.memory_seq
       WHERE ${filters.join(' AND ')}
       ORDER BY s.score_units DESC, m.updated_at DESC, m.id DESC
       LIMIT $10`;
  }
  const { rows } = await db.query<ScoredRow>(sql, params);
  return rows;
}

/**
 * A floor for the limit-th best score, cheaply: the memories with the best partial scores on the
 * essential terms (only their postings are read) are scored in full by index probes, and the
 * limit-th best of those full scores is returned. Any set of memories scored in full has its
 * limit-th best at or below the bank's, so this is a valid floor. 0 when too few qualify.
 */
export async function rankingFloor(db: Queryable, q: RankingQuery, sample: number): Promise<number> {
  const { params, filters, scored } = rankingParts(q, true);
  params.push(sample);
  const sampleParam = `$${params.length}`;
  const sql = `
    WITH part AS (
      SELECT s.memory_seq FROM (${scored}) s
      ${filters.length === 0 ? '' : `JOIN memories m ON m.seq = s.memory_seq WHERE ${filters.join(' AND ')}`}
      ORDER BY s.score_units DESC LIMIT ${sampleParam}
    ),
    whole AS (
      SELECT c.memory_seq,
             sum(round(t.factor * x.f / (x.f + $4::float8) * ${scoreUnitsPerPoint})) AS score_units
        FROM part c
        CROSS JOIN unnest($2::text[], $3::float8[], $11::boolean[]) AS t(term, factor, original)
        -- One index probe per (memory, term); OFFSET 0 keeps the planner from turning the probes
        -- into a scan of every posting of every term.
        CROSS JOIN LATERAL (
          SELECT p.* FROM memory_postings p
           WHERE p.bank_id = $1 AND p.term = t.term AND p.memory_seq = c.memory_seq OFFSET 0
        ) p
        CROSS JOIN LATERAL (${pseudoFrequency}) x
       GROUP BY c.memory_seq
      HAVING bool_or(t.original)
    )
    SELECT score_units FROM whole ORDER BY score_units DESC OFFSET $10 - 1 LIMIT 1`;
  const { rows } = await db.query<{ score_units: number }>(sql, params);
  return rows[0]?.score_units ?? 0;
}

/** BM25F's pseudo-frequency of a posting `p`: headline and body, each normalized by its length. */
const pseudoFrequency = `
  SELECT $5::float8 * p.head_tf / (1 - $6::float8 + $6::float8 * p.head_length / $8::float8)
       + p.body_tf / (1 - $7::float8 + $7::float8 * p.body_length / $9::float8) AS f`;

function rankingParts(q: RankingQuery, essentialOnly: boolean) {
  const params: unknown[] = [
    q.bankId, q.terms, q.factors, q.k1, q.headWeight, q.headB, q.bodyB,
    q.avgHeadLength > 0 ? q.avgHeadLength : 1, q.avgBodyLength > 0 ? q.avgBodyLength : 1, q.limit, q.original, q.essential,
  ];
  const filters: string[] = [];
  if (q.tags && q.tags.length > 0) {
    params.push(q.tags);
    filters.push(`m.tags @> $${params.length}::text[]`);
  }
  if (q.source !== undefined) {
    params.push(q.source);
    filters.push(`m.source = $${params.length}`);
  }
  if (q.scope !== undefined) {
    params.push(q.scope);
    filters.push(`m.scope = $${params.length}`);
  }
  // Postings of non-essential terms count only for memories that have an essential term: they are
  // filtered through a hash of those memories before the (costly) per-posting arithmetic.
  const pruned = !essentialOnly && q.essential.includes(false);
  const scored = `
    SELECT p.memory_seq,
           sum(round(t.factor * x.f / (x.f + $4::float8) * ${scoreUnitsPerPoint})) AS score_units
      FROM unnest($2::text[], $3::float8[], $11::boolean[], $12::boolean[]) AS t(term, factor, original, essential)
      JOIN memory_postings p ON p.bank_id = $1 AND p.term = t.term
      CROSS JOIN LATERAL (${pseudoFrequency}) x
     ${essentialOnly ? 'WHERE t.essential' : pruned ? 'WHERE t.essential OR p.memory_seq IN (SELECT memory_seq FROM candidates)' : ''}
     GROUP BY p.memory_seq
    HAVING bool_or(t.original)`;
  const candidates = pruned
    ? `candidates AS MATERIALIZED (
         SELECT DISTINCT p.memory_seq
           FROM unnest($2::text[], $12::boolean[]) AS e(term, essential)
           JOIN memory_postings p ON p.bank_id = $1 AND p.term = e.term
          WHERE e.essential),`
    : '';
  return { params, filters, scored, candidates };
}

