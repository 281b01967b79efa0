// SQL of memory search (service.ts runs the search): the bank's statistics and the posting blocks of the
// query's terms, then the rows of the best-scored memories. Split from store.ts, which writes and lists.
import type { Queryable } from '../../db/database.ts';
import { liveMemory, memoryColumns, orgKey, type BankKey, type BankStats, type MemoryRow } from './store.ts';

export interface SearchStart {
  bank: BankStats;
  /** Per query term present in the bank: its packed posting blocks and its document frequency. */
  blocks: Map<string, Buffer[]>;
  df: Map<string, number>;
  /** Terms whose postings were asked for (present or not), so none is asked twice. */
  asked: Set<string>;
}

/**
 * The bank's statistics and the postings of some terms, in one statement (one snapshot). Each term is
 * its own probe of the primary key (user_id, bank_id, term, ...), in a subquery the planner cannot
 * flatten (OFFSET 0): asked as `term = ANY(...)` or as a plain join, a table not analyzed yet (PGlite's
 * never are) let the planner read every block of the bank and filter or hash them (4-7 ms at 5,000
 * memories, bench/memory-latency). Every scan names the user as a value (`k.user_id = $1`, not the bank's
 * column): Citus then sends the whole statement to the user's node, where a lateral join that copies
 * the column is a subquery it cannot push down (test/citus).
 * Undefined when the user has no bank here. A term's document frequency is its posting count.
 */
export async function openSearch(db: Queryable, key: BankKey, terms: string[]): Promise<SearchStart | undefined> {
  const { rows } = await db.query<{
    id: number;
    doc_count: number;
    head_length_sum: number;
    body_length_sum: number;
    term: string | null;
    postings: number | null;
    data: Buffer | null;
  }>(
    `SELECT b.id, b.doc_count, b.head_length_sum, b.body_length_sum, k.term, k.postings, k.data
       FROM memory_banks b
       LEFT JOIN LATERAL (
         SELECT k.term, k.postings, k.data FROM unnest($3::text[]) AS w(term)
          CROSS JOIN LATERAL (SELECT * FROM memory_blocks k WHERE k.user_id = $1 AND k.bank_id = b.id AND k.term = w.term OFFSET 0) k
       ) k ON true
      WHERE b.user_id = $1 AND b.org_key = $2`,
    [key.userId, orgKey(key.organizationId), terms],
  );
  const first = rows[0];
  if (!first) return undefined;
  const start: SearchStart = {
    bank: {
      userId: key.userId,
      id: first.id,
      docCount: first.doc_count,
      headLengthSum: first.head_length_sum,
      bodyLengthSum: first.body_length_sum,
    },
    blocks: new Map(),
    df: new Map(),
    asked: new Set(terms),
  };
  addBlocks(start, rows);
  return start;
}

/** More terms' postings for a search begun with openSearch (call it in the same transaction). */
export async function loadTerms(db: Queryable, start: SearchStart, wanted: string[]): Promise<void> {
  const terms = wanted.filter((term) => !start.asked.has(term));
  if (terms.length === 0) return;
  for (const term of terms) start.asked.add(term);
  const { rows } = await db.query<{ term: string; postings: number; data: Buffer }>(
    `SELECT k.term, k.postings, k.data FROM unnest($2::text[]) AS w(term)
      CROSS JOIN LATERAL (SELECT * FROM memory_blocks k WHERE k.user_id = $3 AND k.bank_id = $1 AND k.term = w.term OFFSET 0) k`,
    [start.bank.id, terms, start.bank.userId],
  );
  addBlocks(start, rows);
}

function addBlocks(
  start: SearchStart,
  rows: { term: string | null; postings: number | null; data: Buffer | null }[],
): void {
  for (const row of rows) {
    if (row.term === null) continue;
    const list = start.blocks.get(row.term);
    if (list) list.push(row.data!);
    else start.blocks.set(row.term, [row.data!]);
    start.df.set(row.term, (start.df.get(row.term) ?? 0) + row.postings!);
  }
}

export interface ScoredRow extends MemoryRow {
  /** The score in units of 1e-9 (see postings.ts): an integer, the same on every backend. */
  score_units: number;
  /** With `withVectors`: the stored analysis of the memory, and the bank's document frequency of each of its terms. */
  terms?: string[];
  head_tf?: number[];
  body_tf?: number[];
  head_length?: number;
  body_length?: number;
  term_dfs?: number[];
}

export interface RowsQuery {
  bankId: number;
  userId: string;
  /** Scored memories (memory_seq and score units), in any order. */
  seqs: number[];
  scores: number[];
  limit: number;
  withVectors?: boolean;
  tags?: string[] | undefined;
  source?: string | undefined;
  scope?: string | undefined;
  after?: Date | undefined;
  before?: Date | undefined;
  speaker?: string | undefined;
}

/**
 * The best `limit` of the given scored memories that pass the filters, with their rows: by score,
 * then most recently updated, then id (descending).
 */
export async function scoredRows(db: Queryable, q: RowsQuery): Promise<ScoredRow[]> {
  const params: unknown[] = [q.bankId, q.seqs, q.scores, q.limit, q.userId];
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
  // When a memory happened: its occurredAt, else when it was written.
  if (q.after !== undefined) {
    params.push(q.after);
    filters.push(`coalesce(m.occurred_at, m.created_at) >= $${params.length}`);
  }
  if (q.before !== undefined) {
    params.push(q.before);
    filters.push(`coalesce(m.occurred_at, m.created_at) < $${params.length}`);
  }
  if (q.speaker !== undefined) {
    params.push(q.speaker);
    filters.push(`lower(m.speaker) = lower($${params.length})`);
  }
  // Expired and superseded memories leave search at once; their postings stay until the pruning
  // worker (or a delete) takes them out, so they are dropped here, after scoring.
  filters.push(`m.superseded_by IS NULL AND ${liveMemory}`);
  const order = 'ORDER BY score_units DESC, updated_at DESC, id DESC';
  // Each scored memory is one probe of the unique key (user_id, seq), written so the planner cannot do
  // otherwise: the bank's filter stays outside the LATERAL (its LIMIT keeps it out). Joined plainly, a
  // table not analyzed yet (PGlite's are never) made "user_id = $5 AND bank_id = $1" look like one row,
  // and the planner read the whole bank through its index to find the few: 24 ms against 5 ms per search
  // at 5,000 memories (bench/memory-latency).
  const conditions = ['m.bank_id = $1', ...filters];
  const best = `
    SELECT ${memoryColumns}, s.score_units${q.withVectors ? ', m.terms, m.head_tf, m.body_tf, m.head_length, m.body_length' : ''}
      FROM unnest($2::bigint[], $3::float8[]) AS s(memory_seq, score_units)
      CROSS JOIN LATERAL (SELECT * FROM memories x WHERE x.user_id = $5 AND x.seq = s.memory_seq LIMIT 1) m
     WHERE ${conditions.join(' AND ')}
     ${order} LIMIT $4`;
  // The feedback pass needs the document frequency of each term of its few memories: asked here
  // (after the limit) to save a round trip. One probe of the primary key per term, for the same reason.
  const sql = q.withVectors
    ? `SELECT top.*, (SELECT array_agg(coalesce((SELECT t.df FROM memory_terms t WHERE t.user_id = $5 AND t.bank_id = $1 AND t.term = u.term), 0) ORDER BY u.ord)
                        FROM unnest(top.terms) WITH ORDINALITY AS u(term, ord)) AS term_dfs
         FROM (${best}) top ${order}`
    : best;
  const { rows } = await db.query<ScoredRow>(sql, params);
  return rows;
}
