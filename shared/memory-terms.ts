// The words of a text as memory search counts them. Shared because both sides need the same answer:
// the server indexes and searches with it, and the console marks the words of a result that the search
// counted. Pure (no I/O, no Node or browser API), so it runs in both.
import stem from 'wink-porter2-stemmer';

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
  // phrase), so a text's word count is not bounded by its length: see maxMemoryWords in the memory module's service.ts.
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(tokenPattern)) {
    const word = match[0];
    if (word.length > maxTokenLength || stopWords.has(word)) continue;
    out.push(stemOf(word));
  }
  return out;
}

/**
 * Words that a question is phrased with rather than about ("What would Caroline likely do?", "What
 * kind of ..."), left out of a query when it has other words. They are not in the Snowball list, and
 * they stay indexed: a memory that says "would" is still found by a query of that word alone.
 */
const questionWords = new Set(['would', 'could', 'might', 'likely', 'kind', 'type', 'ever'].map(stemOf));

/** The distinct searchable terms of a query, in first-seen order, question words left out when others remain. */
export function queryTerms(query: string): string[] {
  const all = [...new Set(terms(query))];
  const kept = all.filter((term) => !questionWords.has(term));
  return kept.length > 0 ? kept : all;
}
