// Where a sign-in may send its one-time code (platform/redirect-uris.ts), for the PUBLIC_URLs a deployment
// has: the console's two pages exactly, loopback on any port but orgplane's own, orgplane:, and
// SSO_REDIRECT_URIS exactly; never another URL of orgplane's; the desktop app's sign-in without the pages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRedirectUriPolicy } from '../../src/platform/redirect-uris.ts';

const refusedEverywhere = (base: string) => [
  // orgplane's own routes, above all the OIDC callback, which would hand the code on.
  `${base}/v1/auth/sso/oidc/callback?state=abc`,
  `${base}/v1/auth/sso/oidc/callback`,
  `${base}/v1/auth/sso/authorize?request=x`,
  `${base}/desktop/done`,
  `${base}/`,
  // The console's pages with a query, a fragment or another spelling of their path.
  `${base}/sso/callback?state=x`,
  `${base}/sso/callback?`,
  `${base}/sso/callback#x`,
  `${base}/sso/callback/`,
  `${base}/sso/callback/../../v1/auth/sso/oidc/callback`,
  `${base}/SSO/callback`,
  'https://attacker.example/cb',
  'http://127.0.0.1.attacker.example/cb',
  'https://127.0.0.1:5555/cb',
  'http://192.168.1.5:8080/cb',
  'http://user:pw@127.0.0.1:5555/cb',
  'http://127.0.0.1:5555/cb#fragment',
  'javascript:alert(1)',
  'not a uri',
  '',
];

test("behind an https PUBLIC_URL: the console's pages, loopback but on PORT or 443, orgplane:, SSO_REDIRECT_URIS exactly", () => {
  const base = 'https://orgplane.example.com';
  const policy = createRedirectUriPolicy({
    publicUrl: base,
    listenPort: 8080,
    extra: ['https://tools.example.com/sso-done'],
  });
  for (const uri of [`${base}/sso/callback`, `${base}/sso/test-done`]) {
    assert.equal(policy.ssoSignIn(uri), true, uri);
    assert.equal(policy.desktopSignIn(uri), false, `the desktop app's sign-in never goes to the console: ${uri}`);
  }
  for (const uri of [
    'http://127.0.0.1:5555/cb',
    'http://[::1]:5555/cb',
    'http://localhost:5555/cb?x=1',
    'http://127.0.0.1/cb',
    'http://127.1:5555/cb',
    'orgplane://signed-in',
    'https://tools.example.com/sso-done',
  ]) {
    assert.equal(policy.ssoSignIn(uri), true, uri);
    assert.equal(policy.desktopSignIn(uri), true, uri);
  }
  for (const uri of [
    ...refusedEverywhere(base),
    // Orgplane itself on loopback: the port it listens on, and PUBLIC_URL's (443), on every loopback name.
    'http://127.0.0.1:8080/v1/auth/sso/oidc/callback?state=abc',
    'http://localhost:8080/sso/callback',
    'http://[::1]:8080/x',
    'http://127.0.0.1:443/x',
    // SSO_REDIRECT_URIS exactly: not with a query, not below it.
    'https://tools.example.com/sso-done?state=x',
    'https://tools.example.com/sso-done/more',
  ]) {
    assert.equal(policy.ssoSignIn(uri), false, uri);
    assert.equal(policy.desktopSignIn(uri), false, uri);
  }
});

test("orgplane on loopback (development, the tests): its own port is refused on every loopback name, and so is PUBLIC_URL's", () => {
  const base = 'http://127.0.0.1:8080';
  const policy = createRedirectUriPolicy({ publicUrl: base, listenPort: 8080, extra: [] });
  assert.equal(policy.ssoSignIn(`${base}/sso/callback`), true, "the console's page, exactly");
  for (const uri of [
    ...refusedEverywhere(base),
    'http://localhost:8080/v1/auth/sso/oidc/callback',
    'http://[::1]:8080/anything',
  ]) {
    assert.equal(policy.ssoSignIn(uri), false, uri);
    assert.equal(policy.desktopSignIn(uri), false, uri);
  }
  // Behind a proxy: PUBLIC_URL on localhost:80 while orgplane listens on 3000; neither port is another app's.
  const proxied = createRedirectUriPolicy({ publicUrl: 'http://localhost', listenPort: 3000, extra: [] });
  for (const uri of ['http://127.0.0.1/cb', 'http://localhost:80/cb', 'http://[::1]:3000/cb'])
    assert.equal(proxied.ssoSignIn(uri), false, uri);
  assert.equal(proxied.ssoSignIn('http://127.0.0.1:3001/cb'), true);
  assert.equal(proxied.ssoSignIn('http://localhost/sso/callback'), true, "its console's page");
});

test("under a PUBLIC_URL with a path, the console's pages are under that path", () => {
  const policy = createRedirectUriPolicy({ publicUrl: 'https://example.com/orgplane', listenPort: 8080, extra: [] });
  assert.equal(policy.ssoSignIn('https://example.com/orgplane/sso/callback'), true);
  assert.equal(policy.ssoSignIn('https://example.com/orgplane/sso/test-done'), true);
  assert.equal(policy.ssoSignIn('https://example.com/sso/callback'), false);
  assert.equal(policy.ssoSignIn('https://example.com/orgplane/v1/auth/sso/oidc/callback'), false);
});
