// What the desktop sign-in tests share: the app's loopback redirect URI, the authorize body, and the
// code the browser is sent back with. (A PKCE pair is made as for SSO sign-in: test/sso/oidc-support.ts.)
export { pkcePair } from '../sso/oidc-support.ts';

export const loopbackRedirect = 'http://127.0.0.1:53117/callback';

/** The body of POST /v1/auth/desktop/authorize for this challenge. */
export const authorizeBody = (challenge: string, extra: Record<string, unknown> = {}) => ({
  redirectUri: loopbackRedirect,
  codeChallenge: challenge,
  codeChallengeMethod: 'S256',
  state: 'app-state-1',
  ...extra,
});

/** The code the browser was sent to the app with. */
export const codeOf = (redirectTo: string) => new URL(redirectTo).searchParams.get('code')!;
