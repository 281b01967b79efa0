// The desktop app's sign-in through the console, at the API: the signed-in browser session gets a
// one-time code for the app's loopback redirect; the app redeems it with its verifier for a session
// of its own, for the same person and organization; the sign-in is in the organization's audit log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { authorizeBody, codeOf, loopbackRedirect, pkcePair } from './support.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const t = useTenantApp();
const tenantRouting = checkTenantRouting();

test("authorize gives the browser the app's redirect with a code and its state; the code and verifier give the app its own session", async () => {
  const { member, orgId } = t.tenant;
  const pkce = pkcePair();
  const authorized = await t.as(member.token).post('/v1/auth/desktop/authorize', authorizeBody(pkce.challenge));
  assert.equal(authorized.status, 200, authorized.text);
  const target = new URL(authorized.body.redirectTo);
  assert.equal(`${target.origin}${target.pathname}`, loopbackRedirect);
  assert.equal(target.searchParams.get('state'), 'app-state-1');
  assert.match(codeOf(authorized.body.redirectTo), /^[A-Za-z0-9_-]{40,}$/);

  const exchanged = await t.as().post('/v1/auth/desktop/token', {
    code: codeOf(authorized.body.redirectTo),
    codeVerifier: pkce.verifier,
    redirectUri: loopbackRedirect,
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, member.userId);
  assert.equal(exchanged.body.organizationId, orgId);
  assert.notEqual(exchanged.body.sessionToken, member.token, "a session of its own, not the browser's");

  const me = await t.as(exchanged.body.sessionToken).get('/v1/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user.id, member.userId);
  assert.equal(me.body.activeOrganizationId, orgId);
  assert.equal(me.body.session.authMethod, 'password', "as the browser's session authenticated");
  // Signing the app out leaves the browser signed in.
  assert.equal((await t.as(exchanged.body.sessionToken).post('/v1/auth/sign-out')).status, 204);
  assert.equal((await t.as(member.token).get('/v1/me')).status, 200);

  const log = await t.as(t.tenant.owner.token).get(`/v1/orgs/${orgId}/audit-events?action=user.signed_in&limit=100`);
  assert.equal(log.status, 200, log.text);
  const desktop = log.body.events.filter(
    (event: { changes?: { method?: string }; target: { id: string } }) =>
      event.changes?.method === 'desktop' && event.target.id === member.userId,
  );
  assert.equal(desktop.length, 1, 'one sign-in recorded, when the code was redeemed');
});

test('the orgplane: scheme is a redirect the app may use too, without a state', async () => {
  const pkce = pkcePair();
  const authorized = await t
    .as(t.tenant.admin.token)
    .post(
      '/v1/auth/desktop/authorize',
      authorizeBody(pkce.challenge, { redirectUri: 'orgplane://signed-in', state: undefined }),
    );
  assert.equal(authorized.status, 200, authorized.text);
  assert.equal(new URL(authorized.body.redirectTo).protocol, 'orgplane:');
  assert.equal(new URL(authorized.body.redirectTo).searchParams.has('state'), false);
  const exchanged = await t.as().post('/v1/auth/desktop/token', {
    code: codeOf(authorized.body.redirectTo),
    codeVerifier: pkce.verifier,
    redirectUri: 'orgplane://signed-in',
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, t.tenant.admin.userId);
});

test("cancel answers the app's redirect with access_denied and its state (RFC 6749 4.1.2.1), and makes no code", async () => {
  const cancelled = await t
    .as(t.tenant.member.token)
    .post('/v1/auth/desktop/cancel', { redirectUri: loopbackRedirect, state: 'app-state-2' });
  assert.equal(cancelled.status, 200, cancelled.text);
  const target = new URL(cancelled.body.redirectTo);
  assert.equal(`${target.origin}${target.pathname}`, loopbackRedirect);
  assert.deepEqual(
    [...target.searchParams],
    [
      ['error', 'access_denied'],
      ['state', 'app-state-2'],
    ],
  );
  const scheme = await t.as().post('/v1/auth/desktop/cancel', { redirectUri: 'orgplane://signed-in' });
  assert.equal(scheme.status, 200, scheme.text);
  assert.equal(scheme.body.redirectTo, 'orgplane://signed-in?error=access_denied');
  const { rows } = await t.app.db.query(
    'SELECT count(*)::int AS n FROM desktop_sign_in_codes WHERE redirect_uri = $1',
    ['orgplane://signed-in'],
  );
  assert.equal(rows[0].n, 0, 'cancelling hands out nothing');
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 5);
});
