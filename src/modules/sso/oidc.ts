// The OIDC relying party, through openid-client: discovery (cached a few minutes per connection), the
// authorization URL, and the code exchange with every check of the ID token (signature against the
// IdP's JWKS, iss, aud, exp/iat within SSO_CLOCK_SKEW_SECONDS, nonce, PKCE, state), then UserInfo when
// the ID token lacks the person's claims (its `sub` must be the ID token's). Every request to the IdP
// goes through the guarded outbound client.
import * as client from 'openid-client';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { claimsSuffice, combineClaims, type PersonClaims } from './email-trust.ts';
import type { SsoConnectionRow } from './store.ts';

/** The IdP's UserInfo answer is about another subject than its ID token: nothing in it may be used. */
export class UserInfoSubjectMismatch extends Error {
  constructor() {
    super(
      "The identity provider's UserInfo answer is about another person than its ID token (their sub claims differ), so the sign-in is refused.",
    );
  }
}

const discoveryCacheMs = 5 * 60 * 1000;
const idpTimeoutSeconds = 10;
const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface OidcRelyingPartyDeps {
  outbound: Pick<OutboundClient, 'fetch'>;
  secrets: SecretBox;
  clockSkewSeconds: number;
}

export function createOidcRelyingParty(deps: OidcRelyingPartyDeps) {
  const cache = new Map<string, { config: client.Configuration; until: number }>();

  const customFetch: client.CustomFetch = (url, options) =>
    deps.outbound.fetch(url, {
      method: options.method,
      headers: options.headers as Record<string, string>,
      ...(options.body !== undefined ? { body: options.body as string } : {}),
      redirect: 'manual',
      ...(options.signal ? { signal: options.signal } : {}),
      maxResponseBytes: 1024 * 1024,
    });

  /** The IdP's configuration for the connection (discovery document), cached until the connection changes or five minutes pass. */
  async function configurationFor(connection: SsoConnectionRow): Promise<client.Configuration> {
    const key = `${connection.id}:${connection.updated_at.getTime()}`;
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return cached.config;
    const issuer = new URL(connection.issuer);
    const secret = connection.client_secret_sealed ? deps.secrets.open(connection.client_secret_sealed) : undefined;
    const metadata: Partial<client.ClientMetadata> = { [client.clockTolerance]: deps.clockSkewSeconds };
    if (secret) metadata.client_secret = secret;
    // Plain http only for an IdP on this machine (development and tests): anywhere else it must be https.
    const insecure = issuer.protocol === 'http:' && loopbackHosts.has(issuer.hostname);
    // An OIDC connection always has a client id (only SAML connections have none).
    const config = await client.discovery(
      issuer,
      connection.client_id ?? '',
      metadata,
      secret ? client.ClientSecretPost(secret) : client.None(),
      {
        [client.customFetch]: customFetch,
        timeout: idpTimeoutSeconds,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      },
    );
    config[client.customFetch] = customFetch;
    config.timeout = idpTimeoutSeconds;
    for (const [stale] of cache) if (stale.startsWith(`${connection.id}:`)) cache.delete(stale);
    cache.set(key, { config, until: Date.now() + discoveryCacheMs });
    return config;
  }

  return {
    async authorizationUrl(
      connection: SsoConnectionRow,
      input: {
        redirectUri: string;
        state: string;
        nonce: string;
        codeVerifier: string;
        loginHint: string;
        reauthenticate: boolean;
      },
    ): Promise<string> {
      const config = await configurationFor(connection);
      const parameters: Record<string, string> = {
        redirect_uri: input.redirectUri,
        scope: 'openid email profile',
        response_type: 'code',
        state: input.state,
        nonce: input.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(input.codeVerifier),
        code_challenge_method: 'S256',
        login_hint: input.loginHint,
      };
      // Step-up: the IdP must ask the person again, not reuse its own session.
      if (input.reauthenticate) Object.assign(parameters, { prompt: 'login', max_age: '0' });
      return client.buildAuthorizationUrl(config, parameters).href;
    },

    /**
     * Exchanges the code and checks the ID token; the person's claims, from the ID token and, when it
     * lacks what the connection's e-mail trust needs, from UserInfo. Throws on any failed check.
     */
    async exchange(
      connection: SsoConnectionRow,
      callbackUrl: URL,
      checks: { state: string; nonce: string; codeVerifier: string; reauthenticate: boolean },
    ): Promise<PersonClaims> {
      const config = await configurationFor(connection);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
        // Step-up: the person must have authenticated at the IdP within the last five minutes.
        ...(checks.reauthenticate ? { maxAge: 300 } : {}),
      });
      const idToken = tokens.claims();
      if (!idToken) throw new Error('The identity provider returned no ID token');
      if (claimsSuffice(connection.email_trust, idToken)) return idToken;
      // OpenID Connect Core 5.4: when an access token is issued, a provider may return the scopes'
      // claims (email, email_verified, name...) from UserInfo only, as certified providers do by default.
      if (!config.serverMetadata().userinfo_endpoint || !tokens.access_token) return idToken;
      const userInfo = await client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck);
      if (userInfo.sub !== idToken.sub) throw new UserInfoSubjectMismatch();
      return combineClaims(idToken, userInfo);
    },
  };
}

export type OidcRelyingParty = ReturnType<typeof createOidcRelyingParty>;
