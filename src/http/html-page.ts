// The few HTML pages orgplane serves to people's browsers (the install page, the OAuth callback page).
// Plain HTML with inline styles and no script: every value in them is escaped, and the headers forbid
// scripts, framing, indexing and sending the page's URL (which may carry a token or a code) onward as
// a referrer.

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => escapes[ch]!);
}

export const htmlPageHeaders: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
};

const baseStyle = `
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f5f6f8; color: #1c1e21; margin: 0; }
  main { max-width: 34rem; margin: 10vh auto; background: #fff; border-radius: 12px; padding: 2.5rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.5rem; margin: 0 0 .75rem; }
  p { line-height: 1.5; color: #444; }
`;

/** A whole page: `title` is escaped here; `body` is HTML the caller built with escaped values. */
export function htmlPage(title: string, body: string, style = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${baseStyle}${style}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}
