// Coverage of the audit log, checked rather than hoped for: every mutating operation of the served
// OpenAPI is performed successfully (with the reliability suite's world and valid requests) and must
// have written at least one `success` event carrying its request id; every one refused to a member
// with 403 must have written exactly one `denied` event. The few that deliberately write none are
// listed below with the reason.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { fillPath, loadOpenApi, type OpenApi, type Operation } from '../reliability/openapi.ts';
import { prepareRequest, realDesktopCode, realSsoCode, type Prepared } from '../reliability/requests.ts';
import { startWorld, type World } from '../reliability/world.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { eventsOfRequest, freshRequestId } from './helpers.ts';
import { auditActionWords } from '../../shared/audit-action-words.ts';

/** Mutating operations that write no event of their own, and why. */
const writesNoEvent: Record<string, string> = {
  receiveMessengerWebhook:
    'the webhook ingress: its updates are their own record (GET .../updates), not a change made by anyone',
  testMcpConnection: 'a probe: it records what the server answered (credential health), it changes no configuration',
  bootstrap:
    'succeeds once per instance, and the world is bootstrapped already (its event, instance.bootstrapped, is written in the same transaction as the organization)',
  mcpOAuthCallbackShared:
    'reached only through a real authorization: the world completed one, and its mcp_connection.authorized event is checked below',
  mcpOAuthCallbackIsolated: 'the same as mcpOAuthCallbackShared, for isolated callbacks',
  startSsoSignIn:
    "changes nothing anyone manages: it keeps a sign-in in progress (expiring in 10 minutes, spent by the callback); what becomes of it is recorded by the callback (sso.sign_in_failed, member.provisioned, sso.account_linked) and the exchange (user.signed_in), and a start that cannot read the IdP's configuration writes sso.sign_in_failed (test/sso/oidc-sign-in.audit.test.ts). The exchange below performs a start too",
  cancelDesktopSignIn:
    "changes nothing: it answers where the browser goes when the person cancels the desktop app's sign-in (the app's redirect URI with access_denied)",
  authorizeDesktopSignIn:
    'hands the desktop app a one-time code (a minute, spent by the exchange); redeeming it is the sign-in, recorded by exchangeDesktopSignInCode (user.signed_in with method desktop), which performs an authorize too',
  ssoSamlAcs:
    'the middle of a SAML sign-in, as the OIDC callback (a GET) is of an OIDC one: what becomes of it is recorded by the exchange (user.signed_in), by just-in-time provisioning (member.provisioned), by the first link of an account (sso.account_linked) and, when refused, as sso.sign_in_failed (test/sso/saml-sign-in.audit.test.ts); it needs a SAML IdP the world does not run',
};

let world: World;
let openapi: OpenApi;
let starting: Promise<World> | undefined;
// A real OpenID Provider, so that an SSO code can be exchanged for a session.
let idp: TestIdp | undefined;
const hookTimeout = { timeout: 600_000 };

before(async () => {
  starting = startWorld({ logLevel: 'warn' });
  world = await starting;
  openapi = await loadOpenApi(world.app.url);
  idp = await startTestIdp({ redirectUri: `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback` });
}, hookTimeout);

after(async () => {
  await idp?.close();
  await (await starting?.catch(() => undefined))?.close();
}, hookTimeout);

const mutating = (operation: Operation) => operation.method !== 'GET';

// Deletions after the rest (the SCIM user and group are the world's), the SCIM token's rotation after
// the SCIM operations, and signing out last.
function order(operation: Operation): number {
  if (operation.operationId === 'signOut') return 3;
  if (operation.operationId === 'rotateScimToken') return 2;
  return operation.method === 'DELETE' ? 1 : 0;
}

test('every mutating operation, performed successfully, wrote its event in the same request', {
  timeout: 600_000,
}, async () => {
  const { tenant, ids } = world;
  let scimToken = world.scimToken;
  // An instance administrator, for the plan changes and the administrators.
  const operator = await signUp(world.app.url, 'operator');
  await world.app.db.query('UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);

  async function callerAndRequest(operation: Operation): Promise<{ token?: string; prepared: Prepared }> {
    const prepared = await prepareRequest(world, operation.operationId, operation.path);
    switch (operation.operationId) {
      case 'signUp':
      case 'signIn':
        return { prepared };
      case 'setOrganizationPlan':
      case 'addInstanceAdmin':
        return { token: operator.token, prepared };
      // Another plan than setOrganizationPlan's: the same plan again changes nothing and writes nothing.
      case 'updateInstanceOrganization':
        return { token: operator.token, prepared: { ...prepared, body: { plan: 'team' } } };
      // The member addInstanceAdmin made an administrator (DELETEs run last).
      case 'removeInstanceAdmin':
        return { token: operator.token, prepared: { ...prepared, path: { userId: tenant.member.userId } } };
      case 'reauthenticate':
        return { token: tenant.owner.token, prepared: { ...prepared, body: { password: tenant.owner.password } } };
      case 'deleteMemory':
      case 'updateMemory':
        return { token: tenant.member.token, prepared };
      case 'exchangeSsoCode':
        return { prepared: { ...prepared, body: await realSsoCode(world, idp!) } };
      case 'exchangeDesktopSignInCode':
        return { prepared: { ...prepared, body: await realDesktopCode(world) } };
      case 'authorizeMcpConnection':
        return {
          token: tenant.owner.token,
          prepared: { ...prepared, path: { ...prepared.path, connectionId: ids.connectedOauthConnectionId } },
        };
      case 'acceptInvitation': {
        const invitee = await signUp(world.app.url, 'invitee');
        const invitation = await api(world.app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, {
          email: invitee.email,
          role: 'member',
        });
        return { token: invitee.token, prepared: { path: { ...prepared.path, token: invitation.body.token } } };
      }
      case 'signOut': {
        const session = await api(world.app.url).post('/v1/auth/sign-in', {
          email: tenant.member.email,
          password: tenant.member.password,
        });
        return { token: session.body.sessionToken, prepared };
      }
      default:
        return { token: operation.path.startsWith('/scim/v2') ? scimToken : tenant.owner.token, prepared };
    }
  }

  const operations = openapi.operations.filter(mutating).sort((a, b) => order(a) - order(b));
  const failed: string[] = [];
  const silent: string[] = [];
  let performed = 0;
  for (const operation of operations) {
    if (writesNoEvent[operation.operationId]) continue;
    const { token, prepared } = await callerAndRequest(operation);
    const requestId = freshRequestId();
    const url = `${fillPath(operation.path, prepared.path)}${prepared.query ? `?${prepared.query}` : ''}`;
    const response = await api(world.app.url, token).send(operation.method, url, prepared.body, {
      headers: { 'x-request-id': requestId, ...(prepared.contentType ? { 'content-type': prepared.contentType } : {}) },
    });
    if (response.status >= 300) {
      failed.push(`${operation.operationId}: ${response.status} ${response.text.slice(0, 160)}`);
      continue;
    }
    performed++;
    const events = await eventsOfRequest(world.app, requestId);
    if (events.length === 0 || events.some((event) => event.outcome !== 'success'))
      silent.push(`${operation.operationId} (${operation.method} ${operation.path})`);
    if (operation.operationId === 'rotateScimToken') scimToken = (response.body as { scimToken: string }).scimToken;
    if (operation.operationId === 'transferOwnership') {
      assert.equal(
        (
          await api(world.app.url, tenant.admin.token).post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, {
            memberId: tenant.owner.memberId,
          })
        ).status,
        200,
      );
    }
    if (operation.operationId === 'createOrganization') {
      await api(world.app.url, tenant.owner.token).put('/v1/session/active-organization', {
        organizationId: tenant.orgId,
      });
    }
  }
  assert.deepEqual(failed, [], 'every operation succeeded (else its coverage is not checked)');
  assert.deepEqual(silent, [], 'every successful mutating operation wrote an event');
  assert.ok(performed >= 40, `performed ${performed} operations`);
  // The OAuth callback, performed by the world: the member's grant is in the organization's log.
  const { rows } = await world.app.db.query(
    'SELECT 1 FROM audit_events WHERE organization_id = $1 AND action = $2 AND target_id = $3',
    [tenant.orgId, 'mcp_connection.authorized', ids.connectedOauthConnectionId],
  );
  assert.equal(rows.length, 1, 'the OAuth grant of the world is an event');
  // Every action these operations wrote reads in words in the console.
  const written = await world.app.db.query<{ action: string }>('/* test */ SELECT DISTINCT action FROM audit_events');
  const withoutWords = written.rows.map((row) => row.action).filter((action) => !(action in auditActionWords));
  assert.deepEqual(withoutWords, [], 'actions written with no words in shared/audit-action-words.ts');
});

test('every mutating operation refused to a member with 403 wrote one denied event', { timeout: 600_000 }, async () => {
  const { tenant } = world;
  // Operations a member may perform, or that are not the organization's (accounts, sessions, memory, the
  // SCIM server and the webhook, which take other credentials).
  const skip = new Set([
    'signUp',
    'signIn',
    'signOut',
    'bootstrap',
    'createOrganization',
    'setActiveOrganization',
    'acceptInvitation',
    'createMemory',
    'createMemories',
    'deleteMemory',
    'updateMemory',
    'receiveMessengerWebhook',
    'mcpOAuthCallbackShared',
    'mcpOAuthCallbackIsolated',
  ]);
  let refused = 0;
  const missing: string[] = [];
  for (const operation of openapi.operations.filter(mutating)) {
    if (skip.has(operation.operationId) || operation.path.startsWith('/scim/v2')) continue;
    const prepared = await prepareRequest(world, operation.operationId, operation.path);
    const requestId = freshRequestId();
    const url = `${fillPath(operation.path, prepared.path)}${prepared.query ? `?${prepared.query}` : ''}`;
    const response = await api(world.app.url, tenant.member.token).send(operation.method, url, prepared.body, {
      headers: { 'x-request-id': requestId },
    });
    if (response.status !== 403) continue;
    refused++;
    const events = await eventsOfRequest(world.app, requestId);
    if (events.length !== 1 || events[0].outcome !== 'denied' || events[0].actor_id !== tenant.member.userId)
      missing.push(`${operation.operationId}: ${JSON.stringify(events.map((e) => [e.action, e.outcome]))}`);
  }
  assert.ok(refused >= 15, `${refused} refusals checked`);
  assert.deepEqual(missing, []);
});
