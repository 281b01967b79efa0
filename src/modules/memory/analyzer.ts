import stem from 'wink-porter2-stemmer';

/**
 * Text analysis for memory search, done here rather than with `to_tsvector('english', ...)`:
 * PostgreSQL 15 and the PGlite build (PostgreSQL 18) ship different Snowball versions, which stem
 * some words differently ("add" is `ad` on one and `add` on the other), so SQL-side analysis would
 * give the two backends different scores for the same data. One analyzer in the application keeps
 * them identical. It is the same family of analysis: Unicode letter/digit runs, lower-cased, the
 * Snowball English stop words removed, Porter2 (Snowball English) stemming.
 */

// The Snowball English stop-word list (the one PostgreSQL's `english` configuration uses).
const stopWords = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
  it its itself they them their theirs themselves what which who whom this that these those am is are was were be
  been being have has had having do does did doing a an the and but if or because as until while of at by for with
  about against between into through during before after above below to from up down in out on off over under again
  further then once here there when where why how all any both each few more most other some such no nor not only own
  same so than too very s t can will just don should now`.split(/\s+/),
);

/** Tokens longer than this are not words (hashes, base64, URLs run together): they are not indexed. */
const maxTokenLength = 64;
const tokenPattern = /[\p{L}\p{N}]+/gu;

const stemCache = new Map<string, string>();
function stemOf(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stem(word);
    // A bounded cache: vocabularies are Zipfian, so a few tens of thousands of entries catch most words.
    if (stemCache.size > 50_000) stemCache.clear();
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/** The searchable terms of a text, in order, repeats kept. */
export function terms(text: string): string[] {
  const out: string[] = [];
  // NFKC so that compatibility forms (ligatures, full-width letters, superscripts) match their
  // plain spelling. It can turn one character into several words (U+FDFA becomes a four-word
  // phrase), so a text's word count is not bounded by its length: see maxMemoryWords in service.ts.
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(tokenPattern)) {
    const word = match[0];
    if (word.length > maxTokenLength || stopWords.has(word)) continue;
    out.push(stemOf(word));
  }
  return out;
}

/** The distinct searchable terms of a query, in first-seen order. */
export function queryTerms(query: string): string[] {
  return [...new Set(terms(query))];
}

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
