// A fully populated instance for the reliability suite: the real app with every outside party it
// talks to running on loopback (an MCP server, the bot platform stand-in, a delivery receiver, a
// DNS server), a tenant, and one of every resource, created through the API, so that generated
// requests can name real ids and reach the handlers rather than stopping at a 404.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, signUp, type Tenant, type TestUser } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import type { Config } from '../../src/config.ts';

export const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/** Every secret the world planted, by what it is (the secrets test looks for each of them). */
export type Planted = Record<string, string>;

export interface World {
  app: TestApp;
  tenant: Tenant;
  mcp: RunningServer;
  /** An MCP server that wants `Authorization: Bearer <mcpApiKey>`. */
  mcpKeyed: RunningServer;
  platform: BotPlatform;
  dns: TestDnsServer;
  /** An OAuth-protected MCP server the member has connected to (its tokens are stored, sealed). */
  oauthServer: OAuthMcpServer;
  receiverUrl: string;
  domain: string;
  ids: {
    mcpConnectionId: string;
    mcpKeyedConnectionId: string;
    oauthConnectionId: string;
    /** A connection to the OAuth server, authorized by the member (access and refresh tokens stored). */
    connectedOauthConnectionId: string;
    pluginId: string;
    messengerConnectionId: string;
    teamId: string;
    /** A custom role of organization A, given to nobody. */
    roleId: string;
    apiKeyId: string;
    memoryId: string;
    scimUserId: string;
    scimGroupId: string;
    /** Organization A's SSO connection (OIDC: its SAML metadata is a 404). */
    ssoConnectionId: string;
    invitationToken: string;
    installLinkToken: string;
    /** The other organization's MCP connection and memory, for cross-tenant checks. */
    otherMcpConnectionId: string;
    otherMessengerConnectionId: string;
    otherTeamId: string;
    otherApiKeyId: string;
    otherMemoryId: string;
  };
  /** Credentials the callers use. */
  apiKey: string;
  otherApiKey: string;
  scimToken: string;
  webhookSecret: string;
  /** An extra member whose sessions the matrix expires and revokes. */
  extra: TestUser;
  planted: Planted;
  close(): Promise<void>;
}

function must(response: { status: number; text: string }, status: number, what: string) {
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
}

async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/deliver` };
}

/** A secret that is easy to find in text and could not occur by chance. */
export const marker = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

export async function startWorld(overrides: Partial<Config> = {}): Promise<World> {
  const mcpApiKey = marker('mcpkey');
  // The DNS server picks its port in a way that can race with other listeners: start it alone.
  const dns = await startDnsServer();
  const [mcp, mcpKeyed, platform, receiver, oauthServer] = await Promise.all([
    startStreamableServer(),
    startStreamableServer({ apiKey: mcpApiKey }),
    startBotPlatform(),
    startReceiver(),
    startOAuthMcpServer({ issueRefreshTokens: true }),
  ]);
  const app = await startTestApp({
    allowedPrivateNetworks: LOOPBACK,
    messengerApiRoot: platform.url,
    dnsServers: [dns.address],
    ...overrides,
  });
  const tenant = await createTenant(app.url);
  const { owner, admin, member, otherAdmin } = tenant;
  const planted: Planted = {
    ownerPassword: owner.password,
    adminPassword: admin.password,
    memberPassword: member.password,
    otherPassword: otherAdmin.password,
    ownerSession: owner.token,
    adminSession: admin.token,
    memberSession: member.token,
    otherSession: otherAdmin.token,
    mcpApiKey,
  };
  const asOwner = api(app.url, owner.token);
  const asAdmin = api(app.url, admin.token);
  const asOther = api(app.url, otherAdmin.token);

  // Organization resources.
  const team = await asOwner.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Platform team' });
  must(team, 201, 'create team');
  const teamId: string = team.body.team?.id ?? team.body.id;
  const role = await asOwner.post(`/v1/orgs/${tenant.orgId}/roles`, { name: 'Auditors', permissions: ['audit.view'] });
  must(role, 201, 'create role');
  const roleId: string = role.body.role.id;
  must(
    await asOwner.post(`/v1/orgs/${tenant.orgId}/teams/${teamId}/members`, { memberId: member.memberId }),
    204,
    'add team member',
  );
  const key = await asOwner.post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'ci key', role: 'admin' });
  must(key, 201, 'create api key');
  planted.apiKey = key.body.key;
  const invitation = await asOwner.post(`/v1/orgs/${tenant.orgId}/invitations`, {
    email: `pending.${randomBytes(4).toString('hex')}@example.test`,
    role: 'member',
  });
  must(invitation, 201, 'create invitation');
  planted.invitationToken = invitation.body.token;
  const link = await asOwner.post(`/v1/orgs/${tenant.orgId}/install-links`, {});
  must(link, 201, 'create install link');
  planted.installLinkToken = link.body.token;

  const otherTeam = await asOther.post(`/v1/orgs/${tenant.otherOrgId}/teams`, { name: 'Globex team' });
  must(otherTeam, 201, 'create other team');
  const otherKey = await asOther.post(`/v1/orgs/${tenant.otherOrgId}/api-keys`, { name: 'globex key', role: 'admin' });
  must(otherKey, 201, 'create other api key');
  planted.otherApiKey = otherKey.body.key;

  // MCP connections: no auth, a shared API key, and OAuth with a confidential client.
  const connection = await asOwner.post('/v1/mcp-connections', {
    name: 'Docs',
    url: mcp.url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  must(connection, 201, 'create mcp connection');
  const keyed = await asOwner.post('/v1/mcp-connections', {
    name: 'Keyed',
    url: mcpKeyed.url,
    authType: 'apikey',
    credentialMode: 'shared',
    access: { orgWide: true },
    apiKey: mcpApiKey,
  });
  must(keyed, 201, 'create keyed mcp connection');
  const oauthClientSecret = marker('oauthsecret');
  planted.oauthClientSecret = oauthClientSecret;
  const oauth = await asOwner.post('/v1/mcp-connections', {
    name: 'OAuth server',
    url: `${mcp.url}?oauth`,
    authType: 'oauth',
    credentialMode: 'per_member',
    access: { orgWide: false, teamIds: [teamId] },
    oauthClient: { clientId: 'orgplane-client', clientSecret: oauthClientSecret },
  });
  must(oauth, 201, 'create oauth mcp connection');
  // A client credentials connection authenticating with private_key_jwt: its key is write-only too
  // (the planted value is the key's first base64 line, what any leak of the PEM would carry).
  const clientKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  planted.oauthClientPrivateKey = clientKey.split('\n')[1]!;
  const signing = await asOwner.post('/v1/mcp-connections', {
    name: 'Reports',
    url: `${mcp.url}?client-credentials`,
    authType: 'oauth',
    credentialMode: 'shared',
    access: { orgWide: true },
    oauthClient: { clientId: 'orgplane-reports', privateKey: clientKey, grantType: 'client_credentials' },
  });
  must(signing, 201, 'create client credentials mcp connection');
  // A real OAuth connection: dynamic registration (its client secret), then the member's authorization
  // through the auto-approving server, so access and refresh tokens are stored.
  const connected = await asOwner.post('/v1/mcp-connections', {
    name: 'Files',
    url: oauthServer.url,
    authType: 'oauth',
    credentialMode: 'per_member',
    access: { orgWide: true },
  });
  must(connected, 201, 'create connected oauth mcp connection');
  const connectedId: string = connected.body.id;
  const authorize = await api(app.url, member.token).post(`/v1/mcp-connections/${connectedId}/oauth/authorize`);
  must(authorize, 200, 'oauth authorize');
  const approval = await fetch(authorize.body.authorizationUrl, { redirect: 'manual' });
  await approval.body?.cancel();
  const landing = new URL(approval.headers.get('location')!);
  // The browser that called authorize comes back with the binding cookie it was given.
  const binding = authorize.headers.get('set-cookie')?.split(';')[0] ?? '';
  must(
    await api(app.url).get(`${landing.pathname}${landing.search}`, { headers: { cookie: binding } }),
    200,
    'oauth callback',
  );
  const registered = oauthServer.stats.registrations[0]?.client_secret;
  if (registered) planted.dynamicClientSecret = registered;
  const plugin = await asOwner.post('/v1/plugins', {
    manifest: {
      name: 'Docs plugin',
      version: '1.0.0',
      mcpConnections: [{ name: 'Plugin docs', url: mcp.url, authType: 'none', credentialMode: 'shared' }],
    },
  });
  must(plugin, 201, 'install plugin');
  const otherConnection = await asOther.post('/v1/mcp-connections', {
    name: 'Globex docs',
    url: mcp.url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  must(otherConnection, 201, 'create other mcp connection');

  // Messaging bots.
  const bot = platform.addBot();
  planted.botToken = bot.token;
  const messenger = await asAdmin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: receiver.url });
  must(messenger, 201, 'create messenger connection');
  planted.deliverySecret = messenger.body.deliverySecret;
  const webhookSecret: string = platform.webhookOf(bot.token)!.secretToken!;
  planted.webhookSecret = webhookSecret;
  const otherBot = platform.addBot();
  planted.otherBotToken = otherBot.token;
  const otherMessenger = await asOther.post('/v1/messenger/connections', {
    botToken: otherBot.token,
    deliveryUrl: receiver.url,
  });
  must(otherMessenger, 201, 'create other messenger connection');

  // Memory: the member's own, and one of the other organization's admin.
  const memory = await api(app.url, member.token).post('/v1/memory', {
    content: 'The deploy key rotates every Monday\nAsk the platform team.',
    tags: ['ops'],
  });
  must(memory, 201, 'create memory');
  const otherMemory = await asOther.post('/v1/memory', {
    content: 'Globex secret project codename: Hyperion',
    tags: ['globex'],
  });
  must(otherMemory, 201, 'create other memory');

  // SSO (enterprise plan, verified domain) and SCIM with a provisioned user and group.
  const domain = `acme-${randomBytes(3).toString('hex')}.example.test`;
  await setPlanAsOperator(app, tenant.orgId, 'enterprise');
  const ssoClientSecret = marker('ssosecret');
  planted.ssoClientSecret = ssoClientSecret;
  const sso = await asOwner.put('/v1/sso/connection', {
    domain,
    issuer: 'https://idp.example.test',
    clientId: 'acme-sso',
    clientSecret: ssoClientSecret,
  });
  must(sso, 200, 'put sso connection');
  dns.setTxt(sso.body.connection.verification.recordName, [sso.body.connection.verification.recordValue]);
  must(await asOwner.post('/v1/sso/verify-domain'), 200, 'verify domain');
  const scim = await asOwner.post('/v1/scim/token');
  must(scim, 200, 'scim token');
  const scimToken: string = scim.body.scimToken;
  planted.scimToken = scimToken;
  const scimHeaders = { headers: { 'content-type': 'application/scim+json' } };
  const asScim = api(app.url, scimToken);
  const scimUser = await asScim.post(
    '/scim/v2/Users',
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `ann@${domain}`,
      name: { givenName: 'Ann', familyName: 'Lee' },
      emails: [{ primary: true, value: `ann@${domain}` }],
      active: true,
    },
    scimHeaders,
  );
  must(scimUser, 201, 'scim create user');
  const scimGroup = await asScim.post(
    '/scim/v2/Groups',
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Engineering',
      members: [{ value: scimUser.body.id }],
    },
    scimHeaders,
  );
  must(scimGroup, 201, 'scim create group');

  const extra = await signUp(app.url, 'extra');
  planted.extraPassword = extra.password;

  return {
    app,
    tenant,
    mcp,
    mcpKeyed,
    platform,
    dns,
    domain,
    oauthServer,
    receiverUrl: receiver.url,
    ids: {
      mcpConnectionId: connection.body.id ?? connection.body.connection?.id,
      mcpKeyedConnectionId: keyed.body.id ?? keyed.body.connection?.id,
      oauthConnectionId: oauth.body.id ?? oauth.body.connection?.id,
      connectedOauthConnectionId: connectedId,
      pluginId: plugin.body.id ?? plugin.body.plugin?.id,
      messengerConnectionId: messenger.body.connection.id,
      teamId,
      roleId,
      apiKeyId: key.body.apiKey.id,
      memoryId: memory.body.memory?.id ?? memory.body.id,
      scimUserId: scimUser.body.id,
      scimGroupId: scimGroup.body.id,
      ssoConnectionId: sso.body.connection.id,
      invitationToken: invitation.body.token,
      installLinkToken: link.body.token,
      otherMcpConnectionId: otherConnection.body.id ?? otherConnection.body.connection?.id,
      otherMessengerConnectionId: otherMessenger.body.connection.id,
      otherTeamId: otherTeam.body.team?.id ?? otherTeam.body.id,
      otherApiKeyId: otherKey.body.apiKey.id,
      otherMemoryId: otherMemory.body.memory?.id ?? otherMemory.body.id,
    },
    apiKey: key.body.key,
    otherApiKey: otherKey.body.key,
    scimToken,
    webhookSecret,
    extra,
    planted,
    async close() {
      await app.close();
      await Promise.all([
        mcp.close(),
        mcpKeyed.close(),
        oauthServer.close(),
        platform.close(),
        dns.close(),
        new Promise((resolve) => receiver.server.close(resolve)),
      ]);
    },
  };
}

/** Real values for the path parameters of an OpenAPI path in this world (organization A's resources). */
export function realPathValues(
  world: World,
  path: string,
  memberId = world.tenant.member.memberId,
): Record<string, string> {
  const { ids, tenant } = world;
  const values: Record<string, string> = {
    organizationId: tenant.orgId,
    memberId,
    teamId: ids.teamId,
    roleId: ids.roleId,
    apiKeyId: ids.apiKeyId,
    pluginId: ids.pluginId,
    ssoConnectionId: ids.ssoConnectionId,
    userId: tenant.owner.userId,
  };
  values.connectionId =
    path.startsWith('/v1/messenger') || path.startsWith('/v1/webhooks')
      ? ids.messengerConnectionId
      : ids.mcpConnectionId;
  if (path.startsWith('/v1/invitations')) values.token = ids.invitationToken;
  else values.token = ids.installLinkToken;
  if (path.startsWith('/v1/memory')) values.id = ids.memoryId;
  else if (path.startsWith('/scim/v2/Users')) values.id = ids.scimUserId;
  else if (path.startsWith('/scim/v2/Groups')) values.id = ids.scimGroupId;
  else if (path.startsWith('/scim/v2/Schemas')) values.id = 'urn:ietf:params:scim:schemas:core:2.0:User';
  else if (path.startsWith('/scim/v2/ResourceTypes')) values.id = 'User';
  return values;
}

/** The OAuth test server's access and refresh tokens (`at_`/`rt_` + 32 base64url characters): none may leave orgplane. */
export const oauthTokenPattern = /\b(?:at|rt)_[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/g;
