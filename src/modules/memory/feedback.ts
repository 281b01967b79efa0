// Pseudo-relevance feedback (RM3) of memory search: the terms a second pass adds to the query. Split from
// service.ts, which runs the search and holds the parameters (ranking.feedback).
import { scoreUnitsPerPoint } from './postings.ts';
import type { ScoredRow } from './search-store.ts';
import type { BankStats } from './store.ts';

export interface FeedbackParameters {
  /** How many of the first pass's best memories lend terms. */
  documents: number;
  /** How many terms they lend. */
  terms: number;
  /** The original query's share of the expanded query's weight. */
  originalWeight: number;
  /** A term found in more than this share of the bank's memories is not lent. */
  maxDocumentShare: number;
}

/** RM3: the original terms (weight 1 each) plus the feedback memories' prominent terms. */
export function expandQuery(
  bank: BankStats,
  original: string[],
  firstPass: ScoredRow[],
  feedback: FeedbackParameters,
): Map<string, number> {
  const { documents, terms: termCount, originalWeight, maxDocumentShare } = feedback;
  const top = firstPass.slice(0, documents);
  const best = top[0]!.score_units / scoreUnitsPerPoint;
  const mass = new Map<string, number>();
  const df = new Map<string, number>();
  for (const row of top) {
    for (const [i, term] of row.terms!.entries()) df.set(term, row.term_dfs![i]!);
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
  const common = (term: string) => !own.has(term) && (df.get(term) ?? 0) > maxDocumentShare * bank.docCount;
  // Sorted by mass, then by term, so that equal masses give the same expansion everywhere.
  const selected = [...mass.entries()]
    .filter(([term]) => !common(term))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, termCount);
  const total = selected.reduce((sum, [, value]) => sum + value, 0);
  // Scaled so that an original term weighs 1: scores stay comparable to a plain BM25F pass.
  const scale = original.length / originalWeight;
  const weights = new Map<string, number>(original.map((term) => [term, 1]));
  for (const [term, value] of selected) {
    weights.set(term, (weights.get(term) ?? 0) + (scale * (1 - originalWeight) * value) / total);
  }
  return weights;
}
