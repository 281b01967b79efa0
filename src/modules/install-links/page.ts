// The install page people open from a shared link. Plain HTML with inline styles and no script:
// the organization name is tenant-controlled text and is escaped, and the page's headers forbid
// scripts, framing and sending the tokenised URL onward as a referrer.

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => escapes[ch]!);
}

export const pageHeaders: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
};

const style = `
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f5f6f8; color: #1c1e21; margin: 0; }
  main { max-width: 34rem; margin: 10vh auto; background: #fff; border-radius: 12px; padding: 2.5rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.5rem; margin: 0 0 .75rem; }
  p { line-height: 1.5; color: #444; }
  .actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.5rem; }
  a.button { display: inline-block; padding: .7rem 1.2rem; border-radius: 8px; text-decoration: none; font-weight: 600; }
  a.primary { background: #2457f5; color: #fff; }
  a.secondary { background: #e8ecf7; color: #1c3fb0; }
  .muted { font-size: .875rem; color: #666; }
`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export function installPage(input: { organizationName: string; downloadUrl: string; openInAppUrl: string; configUrl: string }): string {
  const name = escapeHtml(input.organizationName);
  return layout(
    `Join ${input.organizationName} on orgplane`,
    `<h1>Join <span id="organization-name">${name}</span> on orgplane</h1>
<p>You were invited to use the orgplane desktop app with the <strong>${name}</strong> workspace.
Install the app, then open this link in it to connect to the workspace.</p>
<div class="actions">
  <a class="button primary" id="download" href="${escapeHtml(input.downloadUrl)}" rel="noopener noreferrer">Download the desktop app</a>
  <a class="button secondary" id="open-in-app" href="${escapeHtml(input.openInAppUrl)}">Open in the app</a>
</div>
<p class="muted">Already installed? “Open in the app” hands this workspace to orgplane.
The app reads its settings from <a id="config" href="${escapeHtml(input.configUrl)}">this configuration</a>.</p>`,
  );
}

export function invalidLinkPage(): string {
  return layout(
    'This link is no longer valid',
    `<h1 id="invalid">This link is no longer valid</h1>
<p>The install link was replaced by a newer one, or it never existed. Ask an administrator of your
organization for a new link.</p>`,
  );
}

export function tooManyRequestsPage(retryAfterSeconds: number): string {
  return layout(
    'Too many requests',
    `<h1 id="rate-limited">Too many requests</h1>
<p>Please wait ${retryAfterSeconds} seconds and try again.</p>`,
  );
}
