// The words of a memory that match a search, marked. The server does not say which words matched, so
// the console analyzes the text with the words the server's search counts (shared/memory-terms.ts: the
// same tokens, stop words and Porter2 stems): a word is marked exactly when the search counted it,
// "connected" for a query of "connecting".
import type { ComponentChildren } from 'preact';
import { queryTerms, terms } from '../../../../shared/memory-terms.ts';

// The analyzer's notion of a word; each is analyzed alone so that its place in the text is known.
const wordPattern = /[\p{L}\p{N}]+/gu;

export function MarkedText({ text, query }: { text: string; query: string }) {
  const wanted = new Set(queryTerms(query));
  const parts: ComponentChildren[] = [];
  let at = 0;
  for (const match of text.matchAll(wordPattern)) {
    if (!terms(match[0]).some((term) => wanted.has(term))) continue;
    parts.push(text.slice(at, match.index), <mark key={match.index}>{match[0]}</mark>);
    at = match.index + match[0].length;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

/** Whether any word of `text` matches the query (a result found through related words has none). */
export function hasMatch(text: string, query: string): boolean {
  const wanted = new Set(queryTerms(query));
  return terms(text).some((term) => wanted.has(term));
}
