// The page a person sees when the authorization server sends their browser back to a callback (its
// URL carried a code and a state; src/http/html-page.ts gives the headers that keep it from leaking).
import { escapeHtml, htmlPage } from '../../../http/html-page.ts';

/** A browser asking for a page rather than a program asking for JSON. */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

export function callbackPage(input: { ok: boolean; title: string; message: string; code?: string }): string {
  const color = input.ok ? '#1a7f37' : '#b42318';
  return htmlPage(
    input.title,
    `<h1 id="result">${escapeHtml(input.title)}</h1>
<p id="message">${escapeHtml(input.message)}</p>
${input.code ? `<p><code id="code">${escapeHtml(input.code)}</code></p>` : ''}`,
    `h1 { font-size: 1.4rem; color: ${color}; }\n  code { color: #666; font-size: .85rem; }`,
  );
}
