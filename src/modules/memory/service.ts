import type { Database, Queryable } from '../../db/database.ts';
import type { Caller } from '../identity/index.ts';
import { queryTerms } from '../../../shared/memory-terms.ts';
import { limitthBest, ScoreTable, scorePostings, scoreUnitsPerPoint, withNeighbours } from './postings.ts';
import { expandQuery } from './feedback.ts';
import { loadTerms, openSearch, scoredRows, type ScoredRow, type SearchStart } from './search-store.ts';
import { findBank, getMemory, listMemories, type BankRef } from './store.ts';
import { memoryErrors } from './error-codes.ts';
import { bankOf, toMemory, type Memory } from './model.ts';
import { readTimePhrase, type TimePhrase } from './time-phrases.ts';
import { createMemoryWrites, type MemoryWrites } from './writes.ts';

export type { Memory } from './model.ts';

/**
 * Ranking parameters. BM25F with the headline weighted 3x, tuned on the SciFact train split only
 * (bench/memory-relevance), then the body's b lowered from 0.9 to 0.4 for short memories
 * (bench/memory-conversations: a conversation's turns are one line each, and a long turn is not
 * less about its words; SciFact moved from 0.7115 to 0.7131). The headline's b is 0.5 (headlines
 * vary less in length and say more per word).
 */
export const ranking = {
  k1: 1.2,
  headWeight: 3,
  headB: 0.5,
  bodyB: 0.4,
  /**
   * The share of a one-line memory's score lent to the memories written just before and after it
   * (postings.ts, withNeighbours): a conversation's turn is found through the turn it answers.
   * Tuned on bench/memory-conversations (0.3 and 0.4 within 0.001, 0.7 lower).
   */
  neighbourShare: 0.3,
  /**
   * Pseudo-relevance feedback (RM3): the best few memories of a first pass lend their most
   * prominent terms to a second pass, so a query finds memories that say the same thing in other
   * words. The original query keeps most of the weight. A word found in more than 5% of the
   * bank's memories is not used for expansion: it says little about the topic (and it is the
   * expensive kind of word to score).
   */
  feedback: { enabled: true, documents: 3, terms: 20, originalWeight: 0.8, maxDocumentShare: 0.05 },
} as const;

/** Where a page of the list ends: the exact creation time and id of its last memory. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

export interface SearchInput {
  q: string;
  limit: number;
  tags?: string[] | undefined;
  source?: string | undefined;
  scope?: string | undefined;
  /** On when the memory happened (its occurredAt, else its creation): at or after `after`, before `before`. */
  after?: Date | undefined;
  before?: Date | undefined;
  speaker?: string | undefined;
  /** The reference time of the relative dates in `q` (default: the server's clock). */
  now?: Date | undefined;
}

/** A memory found by a search (the bank's organization goes without saying), with its relevance. */
export interface SearchResult extends Omit<Memory, 'organizationId'> {
  score: number;
}

/** A search's results, and the time phrase of its query that became a window on when memories happened. */
export interface SearchOutcome {
  results: SearchResult[];
  time: TimePhrase | null;
}

export interface MemoryService extends MemoryWrites {
  list(
    caller: Caller,
    page: { limit: number; after?: ListPosition | undefined },
  ): Promise<{ items: Memory[]; next: ListPosition | null }>;
  get(caller: Caller, id: string): Promise<Memory>;
  search(caller: Caller, input: SearchInput): Promise<SearchResult[]>;
  searchWithTime(caller: Caller, input: SearchInput): Promise<SearchOutcome>;
}

const idf = (docCount: number, df: number) => Math.log(1 + (docCount - df + 0.5) / (df + 0.5));

/** The scores of a pass and the term weights they were computed with. */
interface Pass {
  scores: ScoreTable;
  weights: Map<string, number>;
}

/**
 * BM25F scores of every memory that contains one of the query's own words, from the postings
 * loaded in `search`. Terms absent from the bank count for nothing. Given an earlier pass over the
 * same query's own words, its scores are the start: only the terms whose weight changed are
 * scored again (their old contributions taken out exactly, scores being sums of whole units), and
 * the new terms added.
 */
function scoreAll(search: SearchStart, weights: Map<string, number>, own: Set<string>, earlier?: Pass): Pass {
  const { bank, blocks, df } = search;
  const bm = {
    k1: ranking.k1,
    headWeight: ranking.headWeight,
    headB: ranking.headB,
    bodyB: ranking.bodyB,
    avgHeadLength: bank.headLengthSum / bank.docCount,
    avgBodyLength: bank.bodyLengthSum / bank.docCount,
  };
  const factor = (term: string, weight: number) => weight * idf(bank.docCount, df.get(term)!) * (ranking.k1 + 1);
  let expected = 0;
  for (const term of own) expected += df.get(term) ?? 0;
  const scores = earlier ? earlier.scores.clone() : new ScoreTable(expected);
  // The query's own words first: they make the candidates, the other terms only add to them.
  const terms = [...weights.keys()].sort((a, b) => Number(own.has(b)) - Number(own.has(a)));
  for (const term of terms) {
    if (!df.get(term)) continue;
    const weight = weights.get(term)!;
    const before = earlier?.weights.get(term);
    if (before === weight) continue;
    if (before !== undefined) scorePostings(scores, blocks.get(term)!, factor(term, before), bm, true, -1);
    scorePostings(scores, blocks.get(term)!, factor(term, weight), bm, !own.has(term));
  }
  return { scores, weights };
}

/** How many results (per result asked for) a filtered search checks against the filters at first. */
const filterWindowFactor = 4;

/**
 * The rows of the best `limit` scored memories that pass the input's filters, in ranking order
 * (score, then updatedAt and id descending). Without filters only the memories scoring at least
 * the limit-th best score are sent to the database. With filters (or when fewer than `limit` of
 * those were there), windows of ever more memories, best first, are checked until `limit` pass:
 * a window ends between two different scores, so the windows' results in window order are the ranking.
 */
async function bestRows(
  tx: Queryable,
  bank: BankRef,
  scores: ScoreTable,
  input: SearchInput,
  limit: number,
  withVectors = false,
): Promise<ScoredRow[]> {
  if (scores.size === 0) return [];
  const filtered =
    (input.tags && input.tags.length > 0) ||
    input.source !== undefined ||
    input.scope !== undefined ||
    input.after !== undefined ||
    input.before !== undefined ||
    input.speaker !== undefined;
  const query = {
    bankId: bank.id,
    userId: bank.userId,
    limit,
    withVectors,
    tags: input.tags,
    source: input.source,
    scope: input.scope,
    after: input.after,
    before: input.before,
    speaker: input.speaker,
  };
  const rows: ScoredRow[] = [];
  const ranked: [number, number][] = [];
  if (!filtered) {
    const cut = limitthBest(scores, limit);
    const seqs: number[] = [];
    const units: number[] = [];
    scores.forEach((seq, score) => {
      if (score < cut) return;
      seqs.push(seq);
      units.push(score);
    });
    rows.push(...(await scoredRows(tx, { ...query, seqs, scores: units })));
    if (rows.length >= limit || seqs.length === scores.size) return rows;
    // Some of the best are not there: expired or superseded (they leave search at query time, before
    // the pruning worker deletes them), or a neighbour lent a score (withNeighbours) that was deleted
    // or is in another bank. The next ones, all scored below the cut, are checked in windows.
    scores.forEach((seq, score) => {
      if (score < cut) ranked.push([seq, score]);
    });
  } else {
    scores.forEach((seq, score) => {
      ranked.push([seq, score]);
    });
  }
  ranked.sort((a, b) => b[1] - a[1]);
  let from = 0;
  let size = limit * filterWindowFactor;
  while (from < ranked.length && rows.length < limit) {
    let to = Math.min(ranked.length, from + size);
    while (to < ranked.length && ranked[to]![1] === ranked[to - 1]![1]) to++;
    const window = ranked.slice(from, to);
    rows.push(
      ...(await scoredRows(tx, {
        ...query,
        limit: limit - rows.length,
        seqs: window.map((e) => e[0]),
        scores: window.map((e) => e[1]),
      })),
    );
    from = to;
    size *= 4;
  }
  return rows;
}

export function createMemoryService({ db }: { db: Database }): MemoryService {
  const service: MemoryService = {
    ...createMemoryWrites({ db }),

    async list(caller, page) {
      const bank = await findBank(db, bankOf(caller));
      if (!bank) return { items: [], next: null };
      const rows = await listMemories(db, bank, page.limit + 1, page.after);
      const items = rows.slice(0, page.limit);
      const last = items[items.length - 1];
      return {
        items: items.map(toMemory),
        next: rows.length > page.limit && last ? { createdAt: last.created_at_exact, id: last.id } : null,
      };
    },

    async get(caller, id) {
      const row = await getMemory(db, bankOf(caller), id);
      if (!row) throw memoryErrors.memory_not_found('No such memory');
      return toMemory(row);
    },

    async search(caller, input) {
      return (await service.searchWithTime(caller, input)).results;
    },

    async searchWithTime(caller, input) {
      const key = bankOf(caller);
      // A phrase naming a time ("last week") is a window on when memories happened, not words to match.
      const time = readTimePhrase(input.q, input.now ?? new Date());
      const original = queryTerms(time ? time.rest : input.q);
      const filters: SearchInput = time
        ? {
            ...input,
            after: input.after && input.after > time.after ? input.after : time.after,
            before: input.before && input.before < time.before ? input.before : time.before,
          }
        : input;
      if (original.length === 0) return { results: [], time };
      // One snapshot for the statistics, the document frequencies and the postings, so that a
      // concurrent write is either wholly in the ranking or wholly out of it.
      const rows = await db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const search = await openSearch(tx, key, original);
        if (!search || search.bank.docCount === 0) return [];
        const own = new Set(original);
        const weights = new Map(original.map((term) => [term, 1]));
        const { enabled, documents } = ranking.feedback;
        const plain = scoreAll(search, weights, own);
        if (!enabled) return bestRows(tx, search.bank, plain.scores, filters, input.limit);
        // Feedback comes from the whole bank, filters aside, so that a memory's score depends on
        // the query and the bank only: a filter narrows the results without changing their scores.
        const first = await bestRows(tx, search.bank, plain.scores, { q: input.q, limit: documents }, documents, true);
        if (first.length === 0) return [];
        const expanded = expandQuery(search.bank, original, first, ranking.feedback);
        await loadTerms(tx, search, [...expanded.keys()]);
        const final = scoreAll(search, expanded, own, plain).scores;
        // Neighbours lent a score are candidates like any other: the same filters (and the live-memory
        // check) decide whether they are returned.
        return bestRows(tx, search.bank, withNeighbours(final, ranking.neighbourShare), filters, input.limit);
      });
      const results = rows.map((row) => {
        const { organizationId: _organizationId, ...memory } = toMemory(row);
        return { ...memory, score: row.score_units / scoreUnitsPerPoint };
      });
      return { results, time };
    },
  };
  return service;
}
