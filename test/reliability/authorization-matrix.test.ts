// The authorization matrix: every route of /openapi.json × nine callers, with the status each cell
// must get written down below. Each request is otherwise valid (real ids of organization A, a body
// that passes validation), so the status says what the caller may do, not what the input lacked.
// Every response to a caller of organization A is also scanned for organization B's ids, names and
// secrets.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { hashToken } from '../../src/platform/tokens.ts';
import { FRESH_AUTHENTICATION } from '../../src/http/auth.ts';
import { api } from '../support/http.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { eventsOfRequest } from '../audit/helpers.ts';
import { fillPath, loadOpenApi, type OpenApi } from './openapi.ts';
import { prepareRequest } from './requests.ts';
import { startWorld, type World } from './world.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const callers = [
  'anonymous',
  'garbage',
  'expired',
  'revoked',
  'member',
  'admin',
  'owner',
  'otherAdmin',
  'apiKey',
] as const;
type CallerName = (typeof callers)[number];

// One row per operation: the expected status for each caller, in the order of `callers`:
//            anon garbage expired revoked member admin owner otherAdmin apiKey
type Row = [number, number, number, number, number, number, number, number, number];
const same = (status: number): Row => [status, status, status, status, status, status, status, status, status];
// Signed-in routes: 401 for the first four and the API key (a session route does not read x-api-key).
const session = (member: number, admin: number, owner: number, otherAdmin: number, apiKey = 401): Row => [
  401,
  401,
  401,
  401,
  member,
  admin,
  owner,
  otherAdmin,
  apiKey,
];

const matrix: Record<string, Row> = {
  // System and public documents: the same for everybody.
  health: same(200),
  // Readiness: public like liveness; the test app's database is reachable and migrated.
  ready: same(200),
  openapi: same(200),
  metrics: same(200),
  oauthClientMetadataDocument: same(200),
  // Sign-up and sign-in need no session; a bearer token, even a bad one, does not matter there.
  bootstrap: same(409),
  // Whether a bootstrap is still needed: public, and the world is bootstrapped.
  getBootstrapStatus: same(200),
  signUp: same(201),
  signIn: same(200),
  // SSO sign-in needs no session: an e-mail of a domain no organization verified (404 sso_not_configured),
  // a link or a callback without its request or state (400 page), a code never issued (400 invalid_grant).
  startSsoSignIn: same(404),
  openSsoSignIn: same(400),
  ssoOidcCallback: same(400),
  // SAML: the ACS without a RelayState (400 page); the SP metadata is public, and the world's connection is OIDC (404 for all).
  ssoSamlAcs: same(400),
  getSsoSamlMetadata: same(404),
  exchangeSsoCode: same(400),
  // The desktop app's sign-in: a code for any signed-in person (their own session's); cancelling and
  // redeeming one need no session, and a code never issued is 400 invalid_grant for everybody.
  authorizeDesktopSignIn: session(200, 200, 200, 200),
  cancelDesktopSignIn: same(200),
  exchangeDesktopSignInCode: same(400),
  getMe: session(200, 200, 200, 200),
  // Step-up with the password: the matrix sends a wrong one (403 invalid_credentials), which changes nothing.
  reauthenticate: session(403, 403, 403, 403),
  createOrganization: session(201, 201, 201, 201),
  setActiveOrganization: session(200, 200, 200, 404),
  getActiveOrganization: session(200, 200, 200, 200),
  // Organization A's routes: another organization's admin learns nothing (404, as for a missing organization).
  renameOrganization: session(403, 200, 200, 404),
  // The owner only, typing the name; the matrix's target is a doomed organization with A's people in it.
  deleteOrganization: session(403, 403, 204, 404),
  createInvitation: session(403, 201, 201, 404),
  listInvitations: session(403, 200, 200, 404),
  revokeInvitation: session(403, 204, 204, 404),
  resendInvitation: session(403, 200, 200, 404),
  listMembers: session(200, 200, 200, 404, 200),
  changeMemberRole: session(403, 200, 200, 404),
  removeMember: session(403, 204, 204, 404),
  transferOwnership: session(403, 403, 200, 404),
  createTeam: session(403, 201, 201, 404),
  listTeams: session(200, 200, 200, 404, 200),
  addTeamMember: session(403, 204, 204, 404),
  removeTeamMember: session(403, 204, 204, 404),
  updateTeam: session(403, 200, 200, 404),
  deleteTeam: session(403, 204, 204, 404),
  // Roles: the catalog and one's own keys for anybody signed in (an API key: its own); the organization's
  // roles for its members; custom roles are changed by holders of roles.manage (the owner, by default).
  listPermissions: session(200, 200, 200, 200, 200),
  getMyPermissions: session(200, 200, 200, 200, 200),
  // Another member's keys (the prepared request asks about the admin's): holders of members.update_role.
  getMemberPermissions: session(403, 200, 200, 404),
  listRoles: session(200, 200, 200, 404),
  createRole: session(403, 403, 201, 404),
  updateRole: session(403, 403, 200, 404),
  deleteRole: session(403, 403, 204, 404),
  createApiKey: session(403, 201, 201, 404),
  listApiKeys: session(403, 200, 200, 404),
  revokeApiKey: session(403, 204, 204, 404),
  // Instance administrators only (nobody in this world is one).
  setOrganizationPlan: session(403, 403, 403, 403),
  getInstanceOverview: session(403, 403, 403, 403),
  listInstancePeople: session(403, 403, 403, 403),
  listInstanceOrganizations: session(403, 403, 403, 403),
  updateInstanceOrganization: session(403, 403, 403, 403),
  listInstanceAdmins: session(403, 403, 403, 403),
  addInstanceAdmin: session(403, 403, 403, 403),
  removeInstanceAdmin: session(403, 403, 403, 403),
  listInstanceAuditEvents: session(403, 403, 403, 403),
  exportInstanceAuditEvents: session(403, 403, 403, 403),
  verifyInstanceAuditEvents: session(403, 403, 403, 403),
  acceptInvitation: session(403, 403, 403, 403),
  // MCP connections: owners and admins manage; members see what they may use; B sees nothing of A.
  createMcpConnection: session(403, 201, 201, 201),
  listMcpConnections: session(200, 200, 200, 200),
  getMcpConnection: session(200, 200, 200, 404),
  editMcpConnection: session(403, 200, 200, 404),
  deleteMcpConnection: session(403, 204, 204, 404),
  replaceMcpConnectionAccess: session(403, 200, 200, 404),
  testMcpConnection: session(403, 200, 200, 404),
  setMcpConnectionApiKey: session(403, 200, 200, 404),
  disconnectMcpConnection: session(403, 204, 204, 404),
  listMcpConnectionTools: session(200, 200, 200, 404),
  setMcpConnectionToolPolicy: session(403, 200, 200, 404),
  installPlugin: session(403, 201, 201, 201),
  uninstallPlugin: session(403, 204, 204, 404),
  // The test MCP server publishes no OAuth metadata at all: taken for a server of the 2025-03-26 spec, its
  // default endpoints are used (/authorize at its origin), so a caller who may use it gets an authorization
  // URL; organization B's admin does not get that far.
  authorizeMcpConnection: session(200, 200, 200, 404),
  // OAuth callbacks are reached by the browser: the signed state, not a session, decides (a made-up one is refused).
  mcpOAuthCallbackShared: same(400),
  mcpOAuthCallbackIsolated: same(400),
  // Install links: any member mints; the public configuration and page need only the token.
  createInstallLink: session(201, 201, 201, 404),
  getInstallLinkConfig: same(200),
  installPage: same(200),
  // SSO and SCIM management: owners and admins of the *active* organization, so organization B's admin
  // acts on B: B is not on the enterprise plan (403 enterprise_plan_required), has no SSO connection (404)
  // and so no SCIM (409 sso_required).
  putSsoConnection: session(403, 200, 200, 403),
  getSsoConnection: session(403, 200, 200, 404),
  verifySsoDomain: session(403, 200, 200, 403),
  rotateScimToken: session(403, 200, 200, 409),
  getScimConnection: session(403, 200, 200, 404),
  // The SCIM server takes only its own bearer token: no session or API key opens it.
  scimServiceProviderConfig: same(401),
  scimResourceTypes: same(401),
  scimResourceType: same(401),
  scimSchemas: same(401),
  scimSchema: same(401),
  scimListUsers: same(401),
  scimCreateUser: same(401),
  scimGetUser: same(401),
  scimReplaceUser: same(401),
  scimPatchUser: same(401),
  scimDeleteUser: same(401),
  scimListGroups: same(401),
  scimCreateGroup: same(401),
  scimGetGroup: same(401),
  scimReplaceGroup: same(401),
  scimPatchGroup: same(401),
  scimDeleteGroup: same(401),
  // Messaging bots: owners and admins.
  createMessengerConnection: session(403, 201, 201, 201),
  listMessengerConnections: session(403, 200, 200, 200),
  getMessengerConnection: session(403, 200, 200, 404),
  updateMessengerConnection: session(403, 200, 200, 404),
  deleteMessengerConnection: session(403, 204, 204, 404),
  listMessengerUpdates: session(403, 200, 200, 404),
  // The webhook is authenticated by the connection's secret only: without it, everybody gets 401.
  receiveMessengerWebhook: same(401),
  // Memory is each user's own: the fixture memory is the member's, so only the member finds it.
  createMemory: session(201, 201, 201, 201),
  listMemories: session(200, 200, 200, 200),
  createMemories: session(201, 201, 201, 201),
  searchMemories: session(200, 200, 200, 200),
  getMemory: session(200, 404, 404, 404),
  deleteMemory: session(204, 404, 404, 404),
  updateMemory: session(200, 404, 404, 404),
  getMemoryHistory: session(200, 404, 404, 404),
  // The audit log: owners and admins of organization A; B's admin learns nothing of it.
  listAuditEvents: session(403, 200, 200, 404),
  exportAuditEvents: session(403, 200, 200, 404),
  verifyAuditEvents: session(403, 200, 200, 404),
  putAuditStream: session(403, 200, 200, 404),
  getAuditStream: session(403, 200, 200, 404),
  deleteAuditStream: session(403, 204, 204, 404),
  // Last: it ends the caller's session (the matrix gives it fresh sessions).
  signOut: session(204, 204, 204, 204),
};

let world: World;
let openapi: OpenApi;
const tokens: Partial<Record<CallerName, string>> = {};
let cells = 0;
const leaks: string[] = [];

// World setup can take minutes on the embedded database of a busy 2-core machine (several suites
// at once): the hooks get their own time, and `after` closes a world still being built when the run stops.
let starting: Promise<World> | undefined;
const hookTimeout = { timeout: 600_000 };

// Every statement the app runs while the world is built and the matrix is walked, for the last test.
const tenantRouting = checkTenantRouting();

before(async () => {
  starting = startWorld({ logLevel: 'warn' });
  world = await starting;
  openapi = await loadOpenApi(world.app.url);
  const { tenant } = world;
  // Expired and revoked sessions of a real member of organization A.
  await addMember(world.app.url, tenant.owner, tenant.orgId, world.extra, 'member');
  const signIn = async () =>
    (await api(world.app.url).post('/v1/auth/sign-in', { email: world.extra.email, password: world.extra.password }))
      .body.sessionToken as string;
  const expired = await signIn();
  const revoked = await signIn();
  await world.app.db.query(
    `UPDATE sessions SET expires_at = now() - interval '1 hour' WHERE user_id = $2 AND token_hash = $1`,
    [hashToken(expired), world.extra.userId],
  );
  assert.equal((await api(world.app.url, revoked).post('/v1/auth/sign-out')).status, 204);
  Object.assign(tokens, {
    garbage: 'ops_never-issued-0123456789',
    expired,
    revoked,
    member: tenant.member.token,
    admin: tenant.admin.token,
    owner: tenant.owner.token,
    otherAdmin: tenant.otherAdmin.token,
  });
}, hookTimeout);

after(async () => {
  console.log(`authorization matrix: ${cells} cells checked`);
  await (await starting?.catch(() => undefined))?.close();
}, hookTimeout);

function headers(caller: CallerName): Record<string, string> {
  if (caller === 'anonymous') return {};
  if (caller === 'apiKey') return { 'x-api-key': world.apiKey };
  return { authorization: `Bearer ${tokens[caller]}` };
}

/** Organization B's identifiers and secrets: none may reach a caller of organization A. */
function organizationBSecrets(): string[] {
  const { tenant, ids, planted } = world;
  return [
    tenant.otherOrgId,
    tenant.otherAdmin.userId,
    tenant.otherAdmin.memberId,
    tenant.otherAdmin.email,
    'Globex',
    ids.otherMcpConnectionId,
    ids.otherMessengerConnectionId,
    ids.otherTeamId,
    ids.otherApiKeyId,
    ids.otherMemoryId,
    planted.otherApiKey!,
    planted.otherBotToken!,
    tenant.otherAdmin.token,
  ];
}

/** Organization A's names, people and secrets: none may reach organization B's admin either (ids the request itself named excepted). */
function organizationASecrets(): string[] {
  const { tenant, ids, planted } = world;
  const people = [tenant.owner, tenant.admin, tenant.member];
  return [
    'Acme',
    ...people.flatMap((user) => [user.email, user.userId, user.memberId, user.token]),
    tenant.orgId,
    ids.mcpConnectionId,
    ids.mcpKeyedConnectionId,
    ids.oauthConnectionId,
    ids.messengerConnectionId,
    ids.teamId,
    ids.apiKeyId,
    ids.memoryId,
    ids.scimUserId,
    ids.scimGroupId,
    planted.apiKey!,
    planted.botToken!,
    planted.scimToken!,
    planted.webhookSecret!,
    planted.mcpApiKey!,
    planted.oauthClientSecret!,
    'deploy key rotates',
  ];
}

/** Puts back what a cell changed that later cells rely on. */
async function restore(operationId: string, caller: CallerName) {
  const { tenant } = world;
  if (operationId === 'transferOwnership' && caller === 'owner') {
    const back = await api(world.app.url, tenant.admin.token).post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, {
      memberId: tenant.owner.memberId,
    });
    assert.equal(back.status, 200, back.text);
  }
  if (operationId === 'createOrganization' || operationId === 'setActiveOrganization') {
    const user =
      caller === 'otherAdmin'
        ? tenant.otherAdmin
        : caller === 'member' || caller === 'admin' || caller === 'owner'
          ? tenant[caller]
          : undefined;
    if (user)
      await api(world.app.url, user.token).put('/v1/session/active-organization', {
        organizationId: caller === 'otherAdmin' ? tenant.otherOrgId : tenant.orgId,
      });
  }
  if (operationId === 'signOut' && tokens[caller] && ['member', 'admin', 'owner', 'otherAdmin'].includes(caller)) {
    const user = caller === 'otherAdmin' ? tenant.otherAdmin : tenant[caller as 'member' | 'admin' | 'owner'];
    const fresh = await api(world.app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
    tokens[caller] = fresh.body.sessionToken;
  }
}

test('every route × every caller gets the status written in the matrix; nothing of one organization reaches the other', {
  timeout: 600_000,
}, async () => {
  const operations = [...openapi.operations].sort(
    (a, b) => Number(a.operationId === 'signOut') - Number(b.operationId === 'signOut'),
  );
  const missing = operations.filter((op) => !matrix[op.operationId]).map((op) => op.operationId);
  assert.deepEqual(missing, [], 'every operation of the OpenAPI has a row in the matrix');
  const mismatches: string[] = [];
  const secretsOfB = organizationBSecrets();
  const secretsOfA = organizationASecrets();
  for (const operation of operations) {
    const row = matrix[operation.operationId]!;
    for (const [index, caller] of callers.entries()) {
      const prepared = await prepareRequest(world, operation.operationId, operation.path);
      const url = `${fillPath(operation.path, prepared.path)}${prepared.query ? `?${prepared.query}` : ''}`;
      const response = await api(world.app.url).send(operation.method, url, prepared.body, {
        headers: { ...headers(caller), ...(prepared.contentType ? { 'content-type': prepared.contentType } : {}) },
      });
      cells++;
      if (response.status !== row[index])
        mismatches.push(
          `${operation.operationId} as ${caller}: expected ${row[index]}, got ${response.status} ${response.text.slice(0, 160)}`,
        );
      if (caller !== 'otherAdmin' && !['openapi', 'metrics'].includes(operation.operationId)) {
        for (const secret of secretsOfB) {
          if (response.text.includes(secret))
            leaks.push(`${operation.operationId} as ${caller} shows organization B's ${secret.slice(0, 12)}…`);
        }
      }
      // The install link's public configuration and page show the organization's id and name to whoever
      // holds the link's token: that is what the link is for (spec: "anyone holding it can read the organization name").
      if (
        caller === 'otherAdmin' &&
        !['openapi', 'metrics', 'getInstallLinkConfig', 'installPage'].includes(operation.operationId)
      ) {
        const sent = `${url} ${JSON.stringify(prepared.body ?? null)}`;
        for (const secret of secretsOfA) {
          if (!sent.includes(secret) && response.text.includes(secret))
            leaks.push(
              `${operation.operationId} as organization B's admin shows organization A's ${secret.slice(0, 12)}…`,
            );
        }
      }
      await restore(operation.operationId, caller);
    }
  }
  assert.deepEqual(leaks, [], 'no response to a caller of one organization names anything of the other');
  assert.deepEqual(mismatches, [], `${mismatches.length} of ${cells} cells differ from the matrix`);
});

// The document tells a client how to authenticate each route: a route that refuses the anonymous caller
// names a scheme, a public one names none, and `apiKey` is named exactly where an API key gets in.
test('the OpenAPI security of every route says what the matrix enforces', () => {
  const wrong: string[] = [];
  for (const operation of openapi.operations) {
    const row = matrix[operation.operationId];
    if (!row) continue; // reported by the matrix test
    const anonymousRefused = row[0] === 401;
    const apiKeyAccepted = anonymousRefused && row[8] !== 401;
    if (anonymousRefused !== operation.security.length > 0)
      wrong.push(`${operation.operationId}: security [${operation.security}] but anonymous gets ${row[0]}`);
    if (apiKeyAccepted !== operation.security.includes('apiKey'))
      wrong.push(`${operation.operationId}: security [${operation.security}] but an API key gets ${row[8]}`);
  }
  assert.deepEqual(wrong, []);
});

// The spec (Authentication 5): a caller who is not signed in gets `unauthorized`, and one who is not
// an owner or admin gets `forbidden`, whatever they sent. So the caller is judged before the input:
// the same cells with every path value tampered with and a body that is not even JSON.
const judgedBeforeInput: Record<string, CallerName[]> = {
  editMcpConnection: ['anonymous', 'garbage', 'expired', 'revoked', 'apiKey', 'member'],
  replaceMcpConnectionAccess: ['anonymous', 'garbage', 'expired', 'revoked', 'apiKey', 'member'],
  setMcpConnectionToolPolicy: ['anonymous', 'garbage', 'expired', 'revoked', 'apiKey', 'member'],
};

test('a caller refused by the matrix is refused the same way when the input is invalid too, before it is read', {
  timeout: 600_000,
}, async () => {
  const mismatches: string[] = [];
  let checked = 0;
  for (const operation of openapi.operations) {
    const row = matrix[operation.operationId];
    if (!row || operation.security.length === 0 || operation.path.startsWith('/scim/v2')) continue;
    const refused = judgedBeforeInput[operation.operationId] ?? ['anonymous', 'garbage', 'expired', 'revoked'];
    const hasBody = ['POST', 'PUT', 'PATCH'].includes(operation.method);
    const url = operation.path.replace(/\{[^}]+\}/g, 'tampered%20id');
    for (const caller of refused) {
      const expected = row[callers.indexOf(caller)];
      const response = await api(world.app.url).send(operation.method, url, undefined, {
        headers: { ...headers(caller), ...(hasBody ? { 'content-type': 'application/json' } : {}) },
        ...(hasBody ? { raw: '{"not json' } : {}),
      });
      checked++;
      if (response.status !== expected)
        mismatches.push(
          `${operation.operationId} as ${caller} with invalid input: expected ${expected}, got ${response.status} ${response.text.slice(0, 120)}`,
        );
    }
  }
  console.log(`authorization matrix with invalid input: ${checked} cells checked`);
  assert.ok(checked > 100, `checked ${checked} cells`);
  assert.deepEqual(mismatches, []);
});

// Step-up re-authentication: every privileged route refuses a session whose person authenticated longer
// ago than REAUTH_MAX_AGE_SECONDS with 403 reauth, for the caller the matrix lets through (the owner; an
// instance operator for the plan), and changes nothing: the request writes no event but its refusal (every
// mutating operation that succeeds writes one, test/audit/coverage.test.ts). The list is written down here
// and must be exactly the operations the OpenAPI marks privileged (test/system/fresh-authentication.test.ts
// says why each is). An operation privileged only for some calls is sent one of those.
interface PrivilegedCall {
  /** Instead of the prepared body. */
  body?: unknown;
  /** Path values instead of the prepared ones. */
  path?: (targets: { sharedOAuthConnectionId: string }) => Record<string, string>;
  /** Who sends it with an old session (default the owner). */
  caller?: 'operator';
}
const privileged: Record<string, PrivilegedCall> = {
  editMcpConnection: {},
  replaceMcpConnectionAccess: {},
  setMcpConnectionToolPolicy: {},
  rotateScimToken: {},
  putSsoConnection: {},
  verifySsoDomain: {},
  createApiKey: {},
  revokeApiKey: {},
  createRole: {},
  updateRole: {},
  deleteRole: {},
  // Giving the team a role (renaming it is not privileged).
  updateTeam: { body: { roleId: 'member' } },
  createInvitation: { body: { email: 'stale.admin@example.test', role: 'admin' } },
  revokeInvitation: {},
  resendInvitation: {},
  changeMemberRole: {},
  // The prepared request removes another member (a member leaving is not privileged).
  removeMember: {},
  transferOwnership: {},
  addTeamMember: {},
  removeTeamMember: {},
  setOrganizationPlan: { caller: 'operator' },
  // Every /v1/admin route, reads included.
  getInstanceOverview: { caller: 'operator' },
  listInstancePeople: { caller: 'operator' },
  listInstanceOrganizations: { caller: 'operator' },
  updateInstanceOrganization: { caller: 'operator' },
  listInstanceAdmins: { caller: 'operator' },
  addInstanceAdmin: { caller: 'operator' },
  removeInstanceAdmin: { caller: 'operator' },
  listInstanceAuditEvents: { caller: 'operator' },
  exportInstanceAuditEvents: { caller: 'operator' },
  verifyInstanceAuditEvents: { caller: 'operator' },
  renameOrganization: {},
  // A doomed organization of the owner's (the prepared request makes one); nothing is deleted here.
  deleteOrganization: {},
  createInstallLink: { body: { rotate: true } },
  putAuditStream: {},
  deleteAuditStream: {},
  authorizeDesktopSignIn: {},
  createMcpConnection: {},
  deleteMcpConnection: {},
  // The shared key of the keyed connection, and its shared credential.
  setMcpConnectionApiKey: {},
  disconnectMcpConnection: {},
  authorizeMcpConnection: { path: ({ sharedOAuthConnectionId }) => ({ connectionId: sharedOAuthConnectionId }) },
  installPlugin: {},
  uninstallPlugin: {},
  createMessengerConnection: {},
  // The prepared body changes deliveryUrl (enabling or disabling alone is not privileged).
  updateMessengerConnection: {},
  deleteMessengerConnection: {},
};

test('every privileged route answers an old session 403 reauth (authentication_too_old)', {
  timeout: 600_000,
}, async () => {
  const marked = openapi.operations
    .filter((op) => openapi.document.paths[op.path][op.method.toLowerCase()][FRESH_AUTHENTICATION])
    .map((op) => op.operationId);
  assert.deepEqual(
    marked.sort(),
    Object.keys(privileged).sort(),
    'the privileged routes are the ones the OpenAPI marks',
  );
  // The requests are prepared as the owner (tokens.owner is their live session since the sign-out cell);
  // the privileged calls are made with another session of theirs, whose authentication is an hour old.
  world.tenant.owner.token = tokens.owner!;
  // So are the admin's and the member's (deleteOrganization's request adds them to a doomed organization).
  world.tenant.admin.token = tokens.admin!;
  world.tenant.member.token = tokens.member!;
  const signIn = async (user: { email: string; password: string }) =>
    (await api(world.app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password })).body
      .sessionToken as string;
  const operator = await signUp(world.app.url, 'operator');
  await world.app.db.query('UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);
  const sharedOAuth = await api(world.app.url, world.tenant.owner.token).post('/v1/mcp-connections', {
    name: 'Shared OAuth',
    url: `${world.oauthServer.url}?shared`,
    authType: 'oauth',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  assert.equal(sharedOAuth.status, 201, sharedOAuth.text);
  const targets = { sharedOAuthConnectionId: sharedOAuth.body.id as string };
  const sessions = { owner: await signIn(world.tenant.owner), operator: await signIn(operator) };
  const mismatches: string[] = [];
  const traces: string[] = [];
  const aged = [
    [hashToken(sessions.owner), world.tenant.owner.userId],
    [hashToken(sessions.operator), operator.userId],
  ];
  for (const session of aged)
    await world.app.db.query(
      `UPDATE sessions SET authenticated_at = now() - interval '1 hour' WHERE user_id = $2 AND token_hash = $1`,
      session,
    );
  try {
    for (const operation of openapi.operations.filter((op) => op.operationId in privileged)) {
      const call = privileged[operation.operationId]!;
      const prepared = await prepareRequest(world, operation.operationId, operation.path);
      const path = { ...prepared.path, ...call.path?.(targets) };
      const url = `${fillPath(operation.path, path)}${prepared.query ? `?${prepared.query}` : ''}`;
      const body = call.body ?? prepared.body;
      const requestId = `stale-${operation.operationId}-${randomBytes(6).toString('hex')}`;
      const response = await api(world.app.url, sessions[call.caller ?? 'owner']).send<{
        error?: string;
        reason?: string;
      }>(operation.method, url, body, { headers: { 'x-request-id': requestId } });
      cells++;
      if (
        response.status !== 403 ||
        response.body?.error !== 'reauth' ||
        response.body?.reason !== 'authentication_too_old'
      ) {
        mismatches.push(
          `${operation.operationId} with an old session: expected 403 reauth, got ${response.status} ${response.text.slice(0, 160)}`,
        );
      }
      const written = (await eventsOfRequest(world.app, requestId)).filter((event) => event.outcome !== 'denied');
      if (written.length > 0)
        traces.push(
          `${operation.operationId} with an old session wrote ${written.map((event) => event.action).join(', ')}`,
        );
    }
  } finally {
    for (const session of aged)
      await world.app.db.query(
        `UPDATE sessions SET authenticated_at = now() WHERE user_id = $2 AND token_hash = $1`,
        session,
      );
  }
  assert.deepEqual(mismatches, []);
  assert.deepEqual(traces, [], 'a refused privileged operation changes nothing');
  console.log(`authorization matrix: ${Object.keys(privileged).length} reauth cells checked`);
});

// On a database distributed by tenant (Citus), a statement runs on one node when it
// names the tenant of every distributed table it reads, and a row lock runs nowhere else. Every route
// was called above by every caller, so the statements captured since the world was built are what the
// app runs; each is planned here and checked (test/db/tenant-routing.ts says how).
test('every statement the routes and workers ran stays on one tenant', { timeout: 600_000 }, async () => {
  const checked = await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 100);
  console.log(`tenant routing: ${checked} statements checked`);
});
