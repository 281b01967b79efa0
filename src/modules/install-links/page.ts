// The install page people open from a shared link. The organization name is tenant-controlled text
// and is escaped like every value; src/http/html-page.ts gives the headers that keep the tokenised URL
// from leaking.
import { escapeHtml, htmlPage } from '../../http/html-page.ts';

const style = `
  .actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.5rem; }
  a.button { display: inline-block; padding: .7rem 1.2rem; border-radius: 8px; text-decoration: none; font-weight: 600; }
  a.primary { background: #2457f5; color: #fff; }
  a.secondary { background: #e8ecf7; color: #1c3fb0; }
  .muted { font-size: .875rem; color: #666; }
`;

const layout = (title: string, body: string) => htmlPage(title, body, style);

export function installPage(input: {
  organizationName: string;
  downloadUrl: string | null;
  openInAppUrl: string;
  configUrl: string;
}): string {
  const name = escapeHtml(input.organizationName);
  const download = input.downloadUrl
    ? `<a class="button primary" id="download" href="${escapeHtml(input.downloadUrl)}" rel="noopener noreferrer">Download the desktop app</a>`
    : `<p id="download-not-configured">The desktop app download is not configured on this server yet: ask the administrator
of ${name} for the app (they set <code>DESKTOP_DOWNLOAD_URL</code> on the server).</p>`;
  return layout(
    `Join ${input.organizationName} on orgplane`,
    `<h1>Join <span id="organization-name">${name}</span> on orgplane</h1>
<p>You were invited to use the orgplane desktop app with the <strong>${name}</strong> workspace.
Install the app, then open this link in it to connect to the workspace.</p>
<div class="actions">
  ${download}
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
