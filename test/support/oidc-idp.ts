// A real OpenID Provider on loopback for SSO tests: oidc-provider (the certified implementation) with a
// signing key generated here. Who signs in is set by the test (`signInAs`): the interaction step logs
// that account in without a form, unless `interactive` is on (the browser test), where oidc-provider's
// own development login page is shown.
//
// By default it is oidc-provider as it ships: `conformIdTokenClaims` on, so with an access token issued
// (the code flow) the ID token carries no scope claims (no e-mail) and the relying party reads them from
// UserInfo (OpenID Connect Core 5.4); the scopes release the claims Core 5.4 lists. A test shapes it like
// another provider (test/sso/provider-shapes.ts) through `claims`, `conformIdTokenClaims` and `claimsFor`.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person at the IdP: `sub` is the account id; every other member is a claim the IdP may release. */
export interface IdpAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  [claim: string]: unknown;
}

/** The claims each scope releases, as OpenID Connect Core 5.4 lists them. */
export const standardScopeClaims: Record<string, string[]> = {
  openid: ['sub'],
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
};

export interface TestIdpOptions {
  redirectUri: string;
  interactive?: boolean;
  /** The claims each scope releases (a claim under `openid` is always released); Core 5.4's by default. */
  claims?: Record<string, string[]>;
  /** oidc-provider's setting, true by default as it ships: false puts the scopes' claims in the ID token too. */
  conformIdTokenClaims?: boolean;
  /** The account's claims for one use (the ID token or UserInfo), as the provider shapes them; the account as given by default. */
  claimsFor?: (account: IdpAccount, use: 'id_token' | 'userinfo') => Record<string, unknown>;
  /** Pairwise subjects (each client sees its own `sub` for a person), as Microsoft Entra ID issues them. */
  pairwiseSubjects?: boolean;
  /**
   * What a misbehaving or compromised provider answers instead: a function that changes the JSON body of
   * its discovery document or of its UserInfo answer before it is sent.
   */
  alter?: (route: 'discovery' | 'userinfo', body: Record<string, unknown>) => Record<string, unknown>;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next sign-in logs in as (non-interactive mode). */
  signInAs(account: IdpAccount): void;
  /** Accounts known to the development login page (interactive mode): the login name is the sub. */
  addAccount(account: IdpAccount): void;
  /** How many UserInfo requests the provider has answered. */
  userInfoRequests(): number;
  /** Every authorization code presented at its token endpoint, in order (what an IdP's operator can read). */
  readonly receivedCodes: string[];
  close(): Promise<void>;
}

export async function startTestIdp(input: TestIdpOptions): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, IdpAccount>();
  let current: IdpAccount | undefined;
  let userInfoRequests = 0;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const clientId = 'orgplane-test';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  const claims = input.claims ?? standardScopeClaims;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [input.redirectUri],
        token_endpoint_auth_method: 'client_secret_post',
        ...(input.pairwiseSubjects ? { subject_type: 'pairwise' } : {}),
      },
    ],
    jwks: { keys: [jwk as never] },
    claims,
    scopes: Object.keys(claims),
    ...(input.conformIdTokenClaims !== undefined ? { conformIdTokenClaims: input.conformIdTokenClaims } : {}),
    ...(input.pairwiseSubjects
      ? {
          subjectTypes: ['public', 'pairwise'],
          async pairwiseIdentifier(_ctx: unknown, accountId: string, client: { sectorIdentifier: string }) {
            return createHash('sha256').update(`${client.sectorIdentifier}|${accountId}`).digest('hex');
          },
        }
      : {}),
    features: { devInteractions: { enabled: input.interactive === true } },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async (use: 'id_token' | 'userinfo') =>
          input.claimsFor ? input.claimsFor(account, use) : { ...account },
      };
    },
    // A first-party client: no consent screen.
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope(Object.keys(claims).join(' '));
      await grant.save();
      return grant;
    },
  });
  provider.proxy = false;
  provider.use(async (ctx: any, next: () => Promise<void>) => {
    await next();
    const route =
      ctx.path === '/.well-known/openid-configuration' ? 'discovery' : ctx.path === '/me' ? 'userinfo' : undefined;
    if (route === 'userinfo' && ctx.status === 200) userInfoRequests += 1;
    if (route && input.alter && ctx.status === 200 && ctx.body && typeof ctx.body === 'object')
      ctx.body = input.alter(route, ctx.body);
  });
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
          await provider.interactionFinished(
            req,
            res,
            { login: { accountId: current.sub } },
            { mergeWithLastSubmission: false },
          );
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
    userInfoRequests: () => userInfoRequests,
    receivedCodes,
    close: () =>
      new Promise<void>((resolve) => {
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
export async function followRedirects(
  url: string,
  stopAt: string,
  jar: CookieJar = new Map(),
): Promise<{ location?: string; status: number; text: string; contentType: string | null }> {
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
