import type { Database, Queryable } from '../../db/database.ts';
import { notFound, unauthorized } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Caller } from '../identity/service.ts';
import { analyzeMemory, queryTerms } from './analyzer.ts';
import {
  deleteMemory,
  documentFrequencies,
  findBank,
  getMemory,
  insertMemories,
  listMemories,
  rankMemories,
  rankingFloor,
  scoreUnitsPerPoint,
  type BankKey,
  type BankStats,
  type MemoryRow,
  type ScoredRow,
} from './store.ts';

export const memoryIdPrefix = 'mry';
export const defaultSource = 'api';
export const defaultScope = 'user';

/**
 * Ranking parameters. BM25F with the headline weighted 3x, tuned on the SciFact train split only
 * (bench/memory-relevance). k1 and b are close to the usual defaults; the body's b is a little
 * higher than 0.75 (long notes are penalized a little more), the headline's lower (headlines vary
 * less in length and say more per word).
 */
export const ranking = {
  k1: 1.2,
  headWeight: 3,
  headB: 0.5,
  bodyB: 0.9,
  /**
   * Pseudo-relevance feedback (RM3): the best few memories of a first pass lend their most
   * prominent terms to a second pass, so a query finds memories that say the same thing in other
   * words. The original query keeps most of the weight. A word found in more than 5% of the
   * bank's memories is not used for expansion: it says little about the topic (and it is the
   * expensive kind of word to score).
   */
  feedback: { enabled: true, documents: 3, terms: 20, originalWeight: 0.8, maxDocumentShare: 0.05 },
} as const;

export interface MemoryInput {
  content: string;
  tags?: string[] | undefined;
  source?: string | undefined;
  scope?: string | undefined;
}

export interface Memory {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  organizationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

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
}

export interface SearchResult {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  createdAt: Date;
  updatedAt: Date;
  score: number;
}

export interface MemoryService {
  create(caller: Caller, input: MemoryInput): Promise<Memory>;
  createMany(caller: Caller, inputs: MemoryInput[]): Promise<Memory[]>;
  list(caller: Caller, page: { limit: number; after?: ListPosition | undefined }): Promise<{ items: Memory[]; next: ListPosition | null }>;
  get(caller: Caller, id: string): Promise<Memory>;
  remove(caller: Caller, id: string): Promise<void>;
  search(caller: Caller, input: SearchInput): Promise<SearchResult[]>;
}

/**
 * The bank a caller works in: their own memories under the session's active organization when
 * they are an active member of it, else their memories outside any organization. Every route
 * (create, list, get, delete, search) sees only that bank, so the same user's memories in another
 * organization are invisible until they switch the session to it.
 */
export function bankOf(caller: Caller): BankKey {
  if (!caller.userId) throw unauthorized();
  return { userId: caller.userId, organizationId: caller.memberId ? caller.organizationId : null };
}

function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    content: row.content,
    tags: row.tags,
    source: row.source,
    scope: row.scope,
    organizationId: row.organization_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Tags are a set: duplicates are dropped, first occurrence order kept. */
function normalizeTags(tags: string[] | undefined): string[] {
  return [...new Set(tags ?? [])];
}

/** How many postings the terms used for the cheap floor query may have. */
const floorPostingBudget = 5_000;
/** How many promising memories (per result asked for) are scored in full for the floor. */
const floorSampleFactor = 4;

/**
 * Document frequencies of some terms, asking the database only for those not yet known in this
 * search (all reads of a search share one snapshot, so a known value is still exact). Absent
 * terms are 0.
 */
async function frequencies(tx: Queryable, bank: BankStats, terms: string[], known: Map<string, number>): Promise<Map<string, number>> {
  const missing = terms.filter((term) => !known.has(term));
  if (missing.length > 0) {
    const found = await documentFrequencies(tx, bank.id, missing);
    for (const term of missing) known.set(term, found.get(term) ?? 0);
  }
  return known;
}

const idf = (docCount: number, df: number) => Math.log(1 + (docCount - df + 0.5) / (df + 0.5));

export function createMemoryService({ db }: { db: Database }): MemoryService {
  async function insert(caller: Caller, inputs: MemoryInput[]): Promise<Memory[]> {
    const key = bankOf(caller);
    const memories = inputs.map((input) => ({
      id: newId(memoryIdPrefix),
      content: input.content,
      tags: normalizeTags(input.tags),
      source: input.source ?? defaultSource,
      scope: input.scope ?? defaultScope,
      analyzed: analyzeMemory(input.content),
    }));
    const rows = await db.transaction((tx) => insertMemories(tx, key, memories));
    return rows.map(toMemory);
  }

  /** One ranking pass with weighted terms; terms absent from the bank are dropped. */
  async function rankPass(
    tx: Queryable,
    bank: BankStats,
    weights: Map<string, number>,
    original: Set<string>,
    input: SearchInput,
    limit: number,
    known: Map<string, number>,
    withVectors = false,
  ): Promise<ScoredRow[]> {
    const df = await frequencies(tx, bank, [...weights.keys()], known);
    const terms: string[] = [];
    const factors: number[] = [];
    const isOriginal: boolean[] = [];
    for (const [term, weight] of weights) {
      const n = df.get(term);
      if (!n) continue;
      terms.push(term);
      // idf is computed here, not in SQL: ln() of the two backends' C libraries may differ in the last bit.
      factors.push(weight * idf(bank.docCount, n) * (ranking.k1 + 1));
      isOriginal.push(original.has(term));
    }
    if (!isOriginal.includes(true)) return [];
    const base = {
      bankId: bank.id,
      terms,
      factors,
      original: isOriginal,
      k1: ranking.k1,
      headWeight: ranking.headWeight,
      headB: ranking.headB,
      bodyB: ranking.bodyB,
      avgHeadLength: bank.headLengthSum / bank.docCount,
      avgBodyLength: bank.bodyLengthSum / bank.docCount,
      limit,
      withVectors,
      tags: input.tags,
      source: input.source,
      scope: input.scope,
    };
    // Pruning (MaxScore): a term's contribution is below its factor, so a memory that contains
    // only non-essential terms scores at most the sum of their factors (the bound). Only memories
    // with an essential term are scored, and the bound is kept below a floor of the limit-th best
    // score, so the result is exactly what scoring every memory would give: pruning only decides
    // how much work it takes.
    const upper = factors.map((factor) => Math.round(factor * scoreUnitsPerPoint));
    // The rarest terms, up to a small posting budget, pick a sample of promising memories whose
    // full scores give a floor for the limit-th best score (see rankingFloor).
    const byRarity = terms.map((_, i) => i).sort((a, b) => df.get(terms[a]!)! - df.get(terms[b]!)! || a - b);
    const rare = new Array<boolean>(terms.length).fill(false);
    let postings = 0;
    for (const [rank, i] of byRarity.entries()) {
      postings += df.get(terms[i]!)!;
      if (rank === 0 || postings <= floorPostingBudget) rare[i] = true;
    }
    const floor = rare.includes(false) ? await rankingFloor(tx, { ...base, essential: rare }, limit * floorSampleFactor) : 0;
    // Terms whose bounds add up to less than the floor can be non-essential: a memory with only
    // those cannot reach the top. The ones left out first are those with the most postings per
    // point of bound. With a floor of 0 every term is essential (a full scoring).
    const essential = terms.map(() => true);
    const byCostPerBound = terms.map((_, i) => i).sort((a, b) => df.get(terms[b]!)! / upper[b]! - df.get(terms[a]!)! / upper[a]! || a - b);
    let bound = 0;
    for (const i of byCostPerBound) {
      if (bound + upper[i]! >= floor) continue;
      bound += upper[i]!;
      essential[i] = false;
    }
    return rankMemories(tx, { ...base, essential });
  }

  /** RM3: the original terms (weight 1 each) plus the feedback memories' prominent terms. */
  async function expandQuery(
    tx: Queryable,
    bank: BankStats,
    original: string[],
    firstPass: ScoredRow[],
    known: Map<string, number>,
  ): Promise<Map<string, number>> {
    const { documents, terms: termCount, originalWeight, maxDocumentShare } = ranking.feedback;
    const top = firstPass.slice(0, documents);
    const best = top[0]!.score_units / scoreUnitsPerPoint;
    const mass = new Map<string, number>();
    for (const row of top) {
      const length = row.head_length! + row.body_length!;
      if (length === 0) continue;
      // A document's share of the relevance model: its score relative to the best, as a likelihood.
      const docWeight = Math.exp(row.score_units / scoreUnitsPerPoint - best);
      for (let i = 0; i < row.terms!.length; i++) {
        const tf = row.head_tf![i]! + row.body_tf![i]!;
        mass.set(row.terms![i]!, (mass.get(row.terms![i]!) ?? 0) + (docWeight * tf) / length);
      }
    }
    const own = new Set(original);
    const df = await frequencies(tx, bank, [...mass.keys()], known);
    const common = (term: string) => !own.has(term) && (df.get(term) ?? 0) > maxDocumentShare * bank.docCount;
    // Sorted by mass, then by term, so that equal masses give the same expansion everywhere.
    const selected = [...mass.entries()].filter(([term]) => !common(term)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, termCount);
    const total = selected.reduce((sum, [, value]) => sum + value, 0);
    // Scaled so that an original term weighs 1: scores stay comparable to a plain BM25F pass.
    const scale = original.length / originalWeight;
    const weights = new Map<string, number>(original.map((term) => [term, 1]));
    for (const [term, value] of selected) {
      weights.set(term, (weights.get(term) ?? 0) + (scale * (1 - originalWeight) * value) / total);
    }
    return weights;
  }

  return {
    async create(caller, input) {
      const [memory] = await insert(caller, [input]);
      return memory!;
    },

    createMany: insert,

    async list(caller, page) {
      const bank = await findBank(db, bankOf(caller));
      if (!bank) return { items: [], next: null };
      const rows = await listMemories(db, bank.id, page.limit + 1, page.after);
      const items = rows.slice(0, page.limit);
      const last = items[items.length - 1];
      return {
        items: items.map(toMemory),
        next: rows.length > page.limit && last ? { createdAt: last.created_at_exact, id: last.id } : null,
      };
    },

    async get(caller, id) {
      const row = await getMemory(db, bankOf(caller), id);
      if (!row) throw notFound('memory_not_found', 'No such memory');
      return toMemory(row);
    },

    async remove(caller, id) {
      const removed = await db.transaction((tx) => deleteMemory(tx, bankOf(caller), id));
      if (!removed) throw notFound('memory_not_found', 'No such memory');
    },

    async search(caller, input) {
      const key = bankOf(caller);
      const original = queryTerms(input.q);
      if (original.length === 0) return [];
      // One snapshot for the statistics, the document frequencies and the postings, so that a
      // concurrent write is either wholly in the ranking or wholly out of it.
      const rows = await db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const bank = await findBank(tx, key);
        if (!bank || bank.docCount === 0) return [];
        const weights = new Map(original.map((term) => [term, 1]));
        const { enabled, documents } = ranking.feedback;
        const own = new Set(original);
        const known = new Map<string, number>();
        if (!enabled) return rankPass(tx, bank, weights, own, input, input.limit, known);
        // Feedback comes from the whole bank, filters aside, so that a memory's score depends on
        // the query and the bank only: a filter narrows the results without changing their scores.
        const first = await rankPass(tx, bank, weights, own, { q: input.q, limit: documents }, documents, known, true);
        if (first.length === 0) return [];
        const expanded = await expandQuery(tx, bank, original, first, known);
        return rankPass(tx, bank, expanded, own, input, input.limit, known);
      });
      return rows.map((row) => ({
        id: row.id,
        content: row.content,
        tags: row.tags,
        source: row.source,
        scope: row.scope,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        score: row.score_units / scoreUnitsPerPoint,
      }));
    },
  };
}
