// The page a person sees when the authorization server sends their browser back to a callback.
// Plain HTML, no script; every value is escaped, and the headers forbid framing and referrers
// (the callback URL carried a code and a state).

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => escapes[ch]!);
}

export const callbackPageHeaders: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** A browser asking for a page rather than a program asking for JSON. */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

export function callbackPage(input: { ok: boolean; title: string; message: string; code?: string }): string {
  const color = input.ok ? '#1a7f37' : '#b42318';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(input.title)}</title>
<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f5f6f8; color: #1c1e21; margin: 0; }
  main { max-width: 34rem; margin: 10vh auto; background: #fff; border-radius: 12px; padding: 2.5rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.4rem; margin: 0 0 .75rem; color: ${color}; }
  p { line-height: 1.5; color: #444; }
  code { color: #666; font-size: .85rem; }
</style>
</head>
<body>
<main>
<h1 id="result">${escapeHtml(input.title)}</h1>
<p id="message">${escapeHtml(input.message)}</p>
${input.code ? `<p><code id="code">${escapeHtml(input.code)}</code></p>` : ''}
</main>
</body>
</html>`;
}
