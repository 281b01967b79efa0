// Where a sign-in may send its one-time code. SSO sign-in: the console's own pages that receive one,
// exactly (PUBLIC_URL/sso/callback, PUBLIC_URL/sso/test-done, without a query of their own); a loopback
// address on any port but orgplane's own (RFC 8252 7.3, for native apps); the desktop app's `orgplane:`
// scheme; and SSO_REDIRECT_URIS, exactly. The desktop app's sign-in through the console: the same
// without the console's pages.
//
// Nothing else of orgplane's own: a page of this server that acts on the query it is sent (the OIDC
// callback above all, which takes a `state` from it and exchanges the code it is given at that state's
// identity provider) would hand the code on to whoever chose the query. Orgplane's own origin on
// loopback is refused for the same reason, whatever PUBLIC_URL says (PORT, and PUBLIC_URL's port).

/** The console's pages that receive an SSO sign-in's code (console/src/pages/auth/sso-sign-in.tsx and pages/sso/sso-test.tsx). */
export const consoleCodePages = ['/sso/callback', '/sso/test-done'] as const;

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

const effectivePort = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

export interface RedirectUriPolicy {
  /** Whether an SSO sign-in may send its code to `uri`. */
  ssoSignIn(uri: string): boolean;
  /** Whether the desktop app's sign-in may send its code to `uri`. */
  desktopSignIn(uri: string): boolean;
}

export function createRedirectUriPolicy(input: {
  publicUrl: string;
  listenPort: number;
  extra: readonly string[];
}): RedirectUriPolicy {
  const publicUrl = new URL(input.publicUrl);
  const base = input.publicUrl.replace(/\/+$/, '');
  const consolePages = new Set(consoleCodePages.map((path) => new URL(`${base}${path}`).href));
  const extra = new Set(input.extra.map((uri) => new URL(uri).href));
  const ownPorts = new Set([String(input.listenPort), effectivePort(publicUrl)]);

  /** The URI, parsed, when it may take a code at all: no fragment (it would be dropped or mishandled), no credentials. */
  function parsed(value: string): URL | undefined {
    if (!URL.canParse(value)) return undefined;
    const uri = new URL(value);
    return uri.hash || uri.username || uri.password ? undefined : uri;
  }

  function outsideOrgplane(uri: URL): boolean {
    if (extra.has(uri.href)) return true;
    if (uri.protocol === 'orgplane:') return true;
    return uri.protocol === 'http:' && loopbackHosts.has(uri.hostname) && !ownPorts.has(effectivePort(uri));
  }

  return {
    ssoSignIn(value) {
      const uri = parsed(value);
      return uri !== undefined && (consolePages.has(uri.href) || outsideOrgplane(uri));
    },
    desktopSignIn(value) {
      const uri = parsed(value);
      return uri !== undefined && outsideOrgplane(uri);
    },
  };
}
