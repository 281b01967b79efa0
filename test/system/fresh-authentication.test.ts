// Which writes need a recent authentication, decided once per operation and checked against the
// document the server serves: every POST, PUT, PATCH and DELETE of GET /openapi.json is classified
// below, either privileged (it changes who can do what, or where data and credentials go, so it must
// carry the fresh-authentication mark) or not, with the reason. An operation missing here fails the
// test, so a new route is classified when it is added; one classified here but no longer served fails
// too. The refusal itself (403 reauth for an old session) is checked per operation by the
// authorization matrix (test/reliability) and by test/identity/reauth-routes.security.test.ts.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { FRESH_AUTHENTICATION } from '../../src/http/auth.ts';
import { useTenantApp } from '../support/harness.ts';

const privileged = 'privileged';
/** `privileged`, or why the operation needs no recent authentication. */
type Classification = typeof privileged | { notPrivileged: string };
const not = (reason: string): Classification => ({ notPrivileged: reason });

/**
 * Operations privileged only for some calls (the route decides, `freshAuthentication: 'by-route'`),
 * with which: the OpenAPI marks the operation, and its description says which calls.
 */
const privilegedByCall: Record<string, string> = {
  removeMember: 'removing another member (a member leaving is not)',
  setMcpConnectionApiKey: 'replacing the shared key (a member storing their own is not)',
  authorizeMcpConnection: 'authorizing the shared identity (a member connecting their own account is not)',
  disconnectMcpConnection: 'deleting the shared credential (a member deleting their own is not)',
  updateMessengerConnection: 'changing deliveryUrl (enabling or disabling is not)',
  createInstallLink: 'rotating (minting a link is not)',
  updateTeam: 'giving the team a role (renaming it is not)',
  setOrganizationPlan: 'judged after the instance-administrator check, so anybody else hears forbidden first',
};

const writes: Record<string, Classification> = {
  // Sign-in itself and the session's own state.
  bootstrap: not('creates the first account of an empty instance: there is no session yet'),
  signUp: not('sign-up: there is no session yet'),
  signIn: not('sign-in itself: it is the authentication'),
  signOut: not("ends the caller's own session"),
  reauthenticate: not('the re-authentication itself'),
  startSsoSignIn: not('sign-in itself (through the identity provider)'),
  exchangeSsoCode: not('sign-in itself: redeems the code of an SSO sign-in'),
  ssoSamlAcs: not('sign-in itself: the SAML assertion consumer'),
  exchangeDesktopSignInCode: not(
    'sign-in itself: redeems a code a fresh session issued (authorizeDesktopSignIn is privileged)',
  ),
  cancelDesktopSignIn: not(
    'hands out nothing: it tells the browser where the desktop app waits for its refusal (access_denied)',
  ),
  authorizeDesktopSignIn: privileged,
  setActiveOrganization: not("the session's own pointer to one of its person's organizations"),
  renameOrganization: privileged,
  deleteOrganization: privileged,
  createOrganization: not('a new, empty organization owned by the caller: nobody gains anything in an existing one'),
  acceptInvitation: not('the invitee joining with their own invitation (sending it was privileged)'),
  // Who can do what in the organization.
  createInvitation: privileged,
  revokeInvitation: privileged,
  resendInvitation: privileged,
  changeMemberRole: privileged,
  removeMember: privileged,
  transferOwnership: privileged,
  createTeam: not('an empty team grants nothing until members are added or a connection names it (both privileged)'),
  addTeamMember: privileged,
  removeTeamMember: privileged,
  updateTeam: privileged,
  deleteTeam: not('takes away what the team gave its members; grants nothing'),
  createRole: privileged,
  updateRole: privileged,
  deleteRole: privileged,
  createApiKey: privileged,
  revokeApiKey: privileged,
  setOrganizationPlan: privileged,
  // Instance administration: every /v1/admin route, reads included, needs a recent authentication.
  updateInstanceOrganization: privileged,
  addInstanceAdmin: privileged,
  removeInstanceAdmin: privileged,
  // Where data and credentials go: MCP connections and plugins.
  createMcpConnection: privileged,
  editMcpConnection: privileged,
  deleteMcpConnection: privileged,
  replaceMcpConnectionAccess: privileged,
  setMcpConnectionToolPolicy: privileged,
  setMcpConnectionApiKey: privileged,
  authorizeMcpConnection: privileged,
  disconnectMcpConnection: privileged,
  testMcpConnection: not(
    'a probe of the stored configuration: it sends what is stored where it is stored, and changes neither',
  ),
  installPlugin: privileged,
  uninstallPlugin: privileged,
  createInstallLink: privileged,
  // SSO, SCIM and the audit trail.
  putSsoConnection: privileged,
  verifySsoDomain: privileged,
  rotateScimToken: privileged,
  putAuditStream: privileged,
  deleteAuditStream: privileged,
  scimCreateUser: not(
    'the SCIM connector, authenticated by its own token (issuing that token is privileged); no person to re-authenticate',
  ),
  scimReplaceUser: not('the SCIM connector (see scimCreateUser)'),
  scimPatchUser: not('the SCIM connector (see scimCreateUser)'),
  scimDeleteUser: not('the SCIM connector (see scimCreateUser)'),
  scimCreateGroup: not('the SCIM connector (see scimCreateUser)'),
  scimReplaceGroup: not('the SCIM connector (see scimCreateUser)'),
  scimPatchGroup: not('the SCIM connector (see scimCreateUser)'),
  scimDeleteGroup: not('the SCIM connector (see scimCreateUser)'),
  // Messaging bots.
  createMessengerConnection: privileged,
  updateMessengerConnection: privileged,
  deleteMessengerConnection: privileged,
  receiveMessengerWebhook: not('the bot platform, authenticated by the webhook secret; no session'),
  // A member's own memory.
  createMemory: not("a member's own memory"),
  createMemories: not("a member's own memory"),
  deleteMemory: not("a member's own memory"),
  updateMemory: not("a member's own memory"),
};

describe('fresh authentication: every write of the served OpenAPI is classified', () => {
  const t = useTenantApp({ tenant: false });
  let operations: { method: string; path: string; operationId: string; operation: Record<string, any> }[];

  before(async () => {
    await t.ready;
    const document = (await t.as().get('/openapi.json')).body as {
      paths: Record<string, Record<string, Record<string, any>>>;
    };
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          operationId: operation.operationId as string,
          operation,
        })),
    );
  });

  test('no write is left unclassified, and nothing classified is gone', () => {
    const unclassified = operations
      .filter(({ operationId }) => !(operationId in writes))
      .map(({ method, path, operationId }) => `${operationId} (${method} ${path})`);
    assert.deepEqual(
      unclassified,
      [],
      'classify each new write in test/system/fresh-authentication.test.ts: privileged, or not with the reason',
    );
    const served = new Set(operations.map(({ operationId }) => operationId));
    assert.deepEqual(
      Object.keys(writes).filter((operationId) => !served.has(operationId)),
      [],
      'classified but not served',
    );
    assert.deepEqual(
      Object.keys(privilegedByCall).filter((operationId) => writes[operationId] !== privileged),
      [],
      'privileged by call means privileged',
    );
  });

  test('a privileged write carries the fresh-authentication mark and a write that is not privileged does not', () => {
    const wrong: string[] = [];
    for (const { operationId, operation } of operations) {
      const classification = writes[operationId];
      if (classification === undefined) continue; // reported above
      const marked = operation[FRESH_AUTHENTICATION] === true;
      if (classification === privileged && !marked)
        wrong.push(`${operationId}: privileged, but the OpenAPI does not mark it`);
      if (classification !== privileged && marked)
        wrong.push(`${operationId}: marked, but classified not privileged (${classification.notPrivileged})`);
    }
    assert.deepEqual(wrong, []);
  });

  test('a privileged write takes no API key, and says so: the rule, and for one privileged by call, which calls', () => {
    const wrong: string[] = [];
    for (const { operationId, operation } of operations) {
      if (writes[operationId] !== privileged) continue;
      const schemes = (operation.security ?? []).flatMap((entry: Record<string, unknown>) => Object.keys(entry));
      if (schemes.includes('apiKey')) wrong.push(`${operationId}: accepts an API key`);
      if (!String(operation.description).includes('needs a recent authentication'))
        wrong.push(`${operationId}: its description does not state the rule`);
      if (
        operationId in privilegedByCall &&
        !/privileged/i.test(String(operation.description).split('Privileged: needs a recent authentication')[0] ?? '')
      ) {
        wrong.push(
          `${operationId}: privileged only for some calls (${privilegedByCall[operationId]}), but its description does not say which`,
        );
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('each reason for not being privileged is one line', () => {
    const reasons = Object.entries(writes).filter(
      (entry): entry is [string, { notPrivileged: string }] => entry[1] !== privileged,
    );
    for (const [operationId, { notPrivileged }] of reasons) assert.match(notPrivileged, /^[^\n]{10,200}$/, operationId);
  });
});
