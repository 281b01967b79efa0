import { terms } from '../../../shared/memory-terms.ts';

/**
 * Text analysis for memory search, done here rather than with `to_tsvector('english', ...)`:
 * PostgreSQL 15 and the PGlite build (PostgreSQL 18) ship different Snowball versions, which stem
 * some words differently ("add" is `ad` on one and `add` on the other), so SQL-side analysis would
 * give the two backends different scores for the same data. One analyzer in the application keeps
 * them identical. It is the same family of analysis: Unicode letter/digit runs, lower-cased, the
 * Snowball English stop words removed, Porter2 (Snowball English) stemming. The words themselves
 * come from shared/memory-terms.ts, which the console uses too (to mark the words a search matched).
 */

// The tests and benchmarks reach the whole analysis through this file.
export { queryTerms } from '../../../shared/memory-terms.ts';

export interface AnalyzedMemory {
  /** Distinct terms with their frequency in the headline and in the body. */
  terms: string[];
  headTf: number[];
  bodyTf: number[];
  headLength: number;
  bodyLength: number;
}

/**
 * A memory's content as two fields. When the content has more than one line, its first line is the
 * headline (a title, a subject, a heading), weighted above the body in ranking (BM25F); a one-line
 * memory is all body.
 */
export function analyzeMemory(content: string): AnalyzedMemory {
  const newline = content.indexOf('\n');
  const hasHeadline = newline > 0 && content.slice(newline + 1).trim() !== '';
  const head = hasHeadline ? terms(content.slice(0, newline)) : [];
  const body = terms(hasHeadline ? content.slice(newline + 1) : content);
  const index = new Map<string, number>();
  const result: AnalyzedMemory = {
    terms: [],
    headTf: [],
    bodyTf: [],
    headLength: head.length,
    bodyLength: body.length,
  };
  const slot = (term: string) => {
    let at = index.get(term);
    if (at === undefined) {
      at = result.terms.length;
      index.set(term, at);
      result.terms.push(term);
      result.headTf.push(0);
      result.bodyTf.push(0);
    }
    return at;
  };
  for (const term of head) result.headTf[slot(term)]! += 1;
  for (const term of body) result.bodyTf[slot(term)]! += 1;
  return result;
}
