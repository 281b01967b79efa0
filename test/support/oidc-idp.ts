// A real OpenID Provider on loopback for SSO tests: oidc-provider (the certified implementation) with a
// signing key generated here. Who signs in is set by the test (`signInAs`): the interaction step logs
// that account in without a form, unless `interactive` is on (the browser test), where oidc-provider's
// own development login page is shown.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface IdpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next sign-in logs in as (non-interactive mode). */
  signInAs(account: IdpAccount): void;
  /** Accounts known to the development login page (interactive mode): the login name is the sub. */
  addAccount(account: IdpAccount): void;
  /** Every authorization code presented at its token endpoint, in order (what an IdP's operator can read). */
  readonly receivedCodes: string[];
  close(): Promise<void>;
}

export async function startTestIdp(input: { redirectUri: string; interactive?: boolean }): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, IdpAccount>();
  let current: IdpAccount | undefined;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const clientId = 'orgplane-test';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [input.redirectUri], token_endpoint_auth_method: 'client_secret_post' }],
    jwks: { keys: [jwk as never] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'email', 'profile'],
    // The scopes' claims in the ID token itself (what orgplane checks), not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: input.interactive === true } },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ ...account }) };
    },
    // A first-party client: no consent screen.
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  provider.proxy = false;
  const receivedCodes: string[] = [];
  const received = (ctx: any) => {
    const code = ctx?.oidc?.params?.code;
    if (typeof code === 'string') receivedCodes.push(code);
  };
  provider.on('grant.success', received);
  provider.on('grant.error', received);
  const callback = provider.callback();
  server.on('request', async (req, res) => {
    try {
      if (!input.interactive && req.url?.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login' && current) {
          accounts.set(current.sub, current);
          await provider.interactionFinished(req, res, { login: { accountId: current.sub } }, { mergeWithLastSubmission: false });
          return;
        }
        res.statusCode = 400;
        res.end(`unexpected prompt ${details.prompt.name}`);
        return;
      }
      callback(req, res);
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      current = account;
      accounts.set(account.sub, account);
    },
    addAccount(account) {
      accounts.set(account.sub, account);
    },
    receivedCodes,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A browser's cookies, by name (they ignore ports and paths: these tests need no more). */
export type CookieJar = Map<string, string>;

export const cookieHeader = (jar: CookieJar) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/** Keeps the cookies a response sets. */
export function keepCookies(jar: CookieJar, response: Response): void {
  for (const header of response.headers.getSetCookie()) {
    const [pair] = header.split(';');
    const index = pair!.indexOf('=');
    jar.set(pair!.slice(0, index).trim(), pair!.slice(index + 1));
  }
}

/**
 * Follows redirects like a browser (keeping cookies in `jar`, a new one unless given) from `url` until one
 * leaves for `stopAt` (an origin or a URL prefix): that location, or the last response when it never does.
 */
export async function followRedirects(url: string, stopAt: string, jar: CookieJar = new Map()): Promise<{ location?: string; status: number; text: string; contentType: string | null }> {
  let next = url;
  for (let hop = 0; hop < 20; hop++) {
    if (next.startsWith(stopAt)) return { location: next, status: 0, text: '', contentType: null };
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } });
    keepCookies(jar, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      next = new URL(location, next).href;
      continue;
    }
    return { status: response.status, text: await response.text(), contentType: response.headers.get('content-type') };
  }
  throw new Error('too many redirects');
}
