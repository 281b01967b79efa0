// Where a sign-in may send its one-time code (SSO sign-in, and the desktop app's sign-in through the
// console): under PUBLIC_URL, a loopback address on any port (RFC 8252 7.3, for native apps), the
// desktop app's own `orgplane:` scheme, and SSO_REDIRECT_URIS.

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function createRedirectUriPolicy(input: { publicUrl: string; extra: readonly string[] }) {
  const publicUrl = new URL(input.publicUrl);
  const publicPrefix = publicUrl.pathname.endsWith('/') ? publicUrl.pathname : `${publicUrl.pathname}/`;
  const extra = new Set(input.extra.map((uri) => new URL(uri).href));
  /** Whether `value` is a redirect URI sign-in may send a code to. */
  return function allowed(value: string): boolean {
    if (!URL.canParse(value)) return false;
    const uri = new URL(value);
    // A fragment would be dropped or mishandled; credentials in a URI are never wanted.
    if (uri.hash || uri.username || uri.password) return false;
    if (extra.has(uri.href)) return true;
    if (uri.protocol === 'orgplane:') return true;
    if (uri.protocol === 'http:' && loopbackHosts.has(uri.hostname)) return true;
    return uri.origin === publicUrl.origin && (uri.pathname + '/').startsWith(publicPrefix);
  };
}
