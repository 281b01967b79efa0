// Step-up re-authentication on every route that changes who can do what, or where data and
// credentials go. Before, only some of them carried the rule: with a session too old to create an API
// key, its person could still invite a new admin (who then does everything the rule protects), connect
// an organization-wide MCP server, install a plugin, repoint a bot, and so on. Here a session whose
// authentication is an hour old tries each of those: every one must be 403 `reauth` and change nothing
// (no event but the refusal in the audit log, and the state read back as before). What is not
// privileged stays open to the same old session, and a caller who may not do a privileged thing at all
// is told that first, not asked to re-authenticate.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { startWorld, type World } from '../reliability/world.ts';
import { eventsOfRequest, freshRequestId } from '../audit/helpers.ts';
import { ageSession, reauthBody } from './reauth-support.ts';

interface Attack {
  /** What the old session tries. */
  name: string;
  /** Sends the request with the old session (`as`) and the request id to find its events by. */
  send(as: (token: string) => ReturnType<typeof api>, requestId: string): Promise<ApiResponse>;
  /** Fails when the attack left a trace in the organization's state. */
  unchanged(): Promise<void>;
}

describe('step-up re-authentication on every privileged route', () => {
  let world: World;
  let starting: Promise<World> | undefined;
  const hookTimeout = { timeout: 600_000 };
  /** Sessions of the owner, the admin, the member and an instance operator whose last authentication is an hour old. */
  const stale = { owner: '', operator: '', admin: '', member: '' };
  let operator: TestUser;
  let attacks: Attack[] = [];
  /** A shared OAuth connection (authorization code), for the shared identity's authorization. */
  let sharedOAuthId = '';

  const fresh = () => api(world.app.url, world.tenant.owner.token);
  const signInAgain = async (user: TestUser) => {
    const response = await api(world.app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
    assert.equal(response.status, 200, response.text);
    return response.body.sessionToken as string;
  };
  const must = async (response: Promise<ApiResponse>, status: number) => {
    const answer = await response;
    assert.equal(answer.status, status, answer.text);
    return answer.body;
  };

  before(async () => {
    starting = startWorld({ logLevel: 'warn' });
    world = await starting;
    const { tenant, ids } = world;
    const org = tenant.orgId;
    operator = await signUp(world.app.url, 'operator');
    await world.app.db.query('UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);
    stale.owner = await signInAgain(tenant.owner);
    stale.operator = await signInAgain(operator);
    stale.admin = await signInAgain(tenant.admin);
    stale.member = await signInAgain(tenant.member);
    for (const token of Object.values(stale)) await ageSession(world.app, token);

    // Targets made with the owner's recent session, one per attack that would destroy it.
    const invitation = await must(
      fresh().post(`/v1/orgs/${org}/invitations`, { email: 'kept.invitee@example.test', role: 'member' }),
      201,
    );
    const removable = await signUp(world.app.url, 'removable');
    await addMember(world.app.url, tenant.owner, org, removable, 'member');
    const key = await must(fresh().post(`/v1/orgs/${org}/api-keys`, { name: 'kept key', role: 'member' }), 201);
    const doomed = await must(
      fresh().post('/v1/mcp-connections', {
        name: 'Kept connection',
        url: world.mcp.url,
        authType: 'none',
        credentialMode: 'shared',
        access: { orgWide: true },
      }),
      201,
    );
    const sharedOAuth = await must(
      fresh().post('/v1/mcp-connections', {
        name: 'Shared files',
        url: `${world.oauthServer.url}?shared`,
        authType: 'oauth',
        credentialMode: 'shared',
        access: { orgWide: true },
      }),
      201,
    );
    sharedOAuthId = sharedOAuth.id;
    const bot = world.platform.addBot();
    const keptBot = await must(
      fresh().post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: world.receiverUrl }),
      201,
    );
    const newBot = world.platform.addBot();
    const keyedCredentials = await credentialCount(ids.mcpKeyedConnectionId);
    assert.equal(keyedCredentials, 1, 'the keyed connection has its shared key');

    attacks = [
      {
        name: 'invite a new admin',
        send: (as, id) =>
          as(stale.owner).post(
            `/v1/orgs/${org}/invitations`,
            { email: 'attacker.admin@example.test', role: 'admin' },
            withId(id),
          ),
        unchanged: async () => {
          const list = await must(fresh().get(`/v1/orgs/${org}/invitations`), 200);
          assert.ok(
            !list.invitations.some((entry: { email: string }) => entry.email === 'attacker.admin@example.test'),
            'no invitation for the attacker',
          );
        },
      },
      {
        name: 'resend an invitation (a new link)',
        send: (as, id) =>
          as(stale.owner).post(`/v1/orgs/${org}/invitations/${invitation.invitation.id}/resend`, undefined, withId(id)),
        unchanged: async () => {
          const list = await must(fresh().get(`/v1/orgs/${org}/invitations`), 200);
          const entry = list.invitations.find((each: { id: string }) => each.id === invitation.invitation.id);
          assert.equal(entry?.expiresAt, invitation.invitation.expiresAt, 'the invitation was not renewed');
        },
      },
      {
        name: 'revoke an invitation',
        send: (as, id) => as(stale.owner).delete(`/v1/orgs/${org}/invitations/${invitation.invitation.id}`, withId(id)),
        unchanged: async () => {
          const list = await must(fresh().get(`/v1/orgs/${org}/invitations`), 200);
          assert.ok(
            list.invitations.some((entry: { id: string }) => entry.id === invitation.invitation.id),
            'the invitation is still pending',
          );
        },
      },
      {
        name: 'remove another member',
        send: (as, id) => as(stale.owner).delete(`/v1/orgs/${org}/members/${removable.memberId}`, withId(id)),
        unchanged: async () => assert.ok(await isMember(removable.memberId), 'the member is still there'),
      },
      {
        name: 'add a member to a team',
        send: (as, id) =>
          as(stale.owner).post(
            `/v1/orgs/${org}/teams/${ids.teamId}/members`,
            { memberId: tenant.admin.memberId },
            withId(id),
          ),
        unchanged: async () =>
          assert.ok(!(await teamMemberIds()).includes(tenant.admin.memberId), 'the admin is not in the team'),
      },
      {
        name: 'remove a member from a team',
        send: (as, id) =>
          as(stale.owner).delete(`/v1/orgs/${org}/teams/${ids.teamId}/members/${tenant.member.memberId}`, withId(id)),
        unchanged: async () =>
          assert.ok((await teamMemberIds()).includes(tenant.member.memberId), 'the member is still in the team'),
      },
      {
        name: 'revoke an API key',
        send: (as, id) => as(stale.owner).delete(`/v1/orgs/${org}/api-keys/${key.apiKey.id}`, withId(id)),
        unchanged: async () => {
          const list = await must(fresh().get(`/v1/orgs/${org}/api-keys`), 200);
          assert.ok(
            list.apiKeys.some((entry: { id: string }) => entry.id === key.apiKey.id),
            'the key is still active',
          );
        },
      },
      {
        name: 'create an organization-wide MCP connection',
        send: (as, id) =>
          as(stale.owner).post(
            '/v1/mcp-connections',
            {
              name: 'Exfiltration',
              url: world.mcp.url,
              authType: 'none',
              credentialMode: 'shared',
              access: { orgWide: true },
            },
            withId(id),
          ),
        unchanged: async () => assert.ok(!(await connectionNames()).includes('Exfiltration'), 'no such connection'),
      },
      {
        name: 'delete an MCP connection',
        send: (as, id) => as(stale.owner).delete(`/v1/mcp-connections/${doomed.id}`, withId(id)),
        unchanged: async () =>
          assert.ok((await connectionNames()).includes('Kept connection'), 'the connection is still there'),
      },
      {
        name: 'replace the shared API key of an MCP connection',
        send: (as, id) =>
          as(stale.owner).put(
            `/v1/mcp-connections/${ids.mcpKeyedConnectionId}/credentials`,
            { apiKey: world.planted.mcpApiKey },
            withId(id),
          ),
        unchanged: async () => assert.equal(await credentialCount(ids.mcpKeyedConnectionId), 1),
      },
      {
        name: 'disconnect the shared credential of an MCP connection',
        send: (as, id) =>
          as(stale.owner).delete(`/v1/mcp-connections/${ids.mcpKeyedConnectionId}/credentials`, withId(id)),
        unchanged: async () =>
          assert.equal(await credentialCount(ids.mcpKeyedConnectionId), 1, 'the shared key is still stored'),
      },
      {
        name: 'authorize the shared OAuth identity of an MCP connection',
        send: (as, id) =>
          as(stale.owner).post(`/v1/mcp-connections/${sharedOAuth.id}/oauth/authorize`, undefined, withId(id)),
        unchanged: async () => {
          const { rows } = await world.app.db.query(
            'SELECT 1 FROM mcp_oauth_pending_authorizations WHERE organization_id = $1 AND connection_id = $2',
            [org, sharedOAuth.id],
          );
          assert.equal(rows.length, 0, 'no authorization in progress');
        },
      },
      {
        name: 'install a plugin',
        send: (as, id) =>
          as(stale.owner).post(
            '/v1/plugins',
            {
              manifest: {
                name: 'Backdoor',
                version: '1.0.0',
                mcpConnections: [
                  {
                    name: 'Backdoor server',
                    url: `${world.mcp.url}?backdoor`,
                    authType: 'none',
                    credentialMode: 'shared',
                  },
                ],
              },
            },
            withId(id),
          ),
        unchanged: async () => {
          assert.ok(!(await connectionNames()).includes('Backdoor server'), 'no connection of the plugin');
          assert.equal(await pluginCount('Backdoor'), 0, 'no such plugin');
        },
      },
      {
        name: 'uninstall a plugin',
        send: (as, id) => as(stale.owner).delete(`/v1/plugins/${ids.pluginId}`, withId(id)),
        unchanged: async () => assert.equal(await pluginCount('Docs plugin'), 1, 'the plugin is still installed'),
      },
      {
        name: 'connect a messaging bot',
        send: (as, id) =>
          as(stale.owner).post(
            '/v1/messenger/connections',
            { botToken: newBot.token, deliveryUrl: world.receiverUrl },
            withId(id),
          ),
        unchanged: async () =>
          assert.equal(world.platform.webhookOf(newBot.token), undefined, 'no webhook registered for the bot'),
      },
      {
        name: "send a bot's messages to another delivery URL",
        send: (as, id) =>
          as(stale.owner).patch(
            `/v1/messenger/connections/${ids.messengerConnectionId}`,
            { deliveryUrl: `${world.receiverUrl}?stolen` },
            withId(id),
          ),
        unchanged: async () => {
          const connection = await must(fresh().get(`/v1/messenger/connections/${ids.messengerConnectionId}`), 200);
          assert.equal(connection.connection.deliveryUrl, world.receiverUrl);
        },
      },
      {
        name: 'delete a bot connection',
        send: (as, id) => as(stale.owner).delete(`/v1/messenger/connections/${keptBot.connection.id}`, withId(id)),
        unchanged: async () =>
          void (await must(fresh().get(`/v1/messenger/connections/${keptBot.connection.id}`), 200)),
      },
      {
        name: 'verify the SSO domain (turning SSO sign-in on for it)',
        send: (as, id) => as(stale.owner).post('/v1/sso/verify-domain', undefined, withId(id)),
        unchanged: async () => {},
      },
      {
        name: "change an organization's plan (an instance operator)",
        send: (as, id) =>
          as(stale.operator).put(`/v1/admin/orgs/${tenant.otherOrgId}/plan`, { plan: 'enterprise' }, withId(id)),
        unchanged: async () => {
          const { rows } = await world.app.db.query<{ plan: string }>('SELECT plan FROM organizations WHERE id = $1', [
            tenant.otherOrgId,
          ]);
          assert.equal(rows[0]?.plan, 'free');
        },
      },
    ];
  }, hookTimeout);

  after(async () => {
    await (await starting?.catch(() => undefined))?.close();
  }, hookTimeout);

  const withId = (requestId: string) => ({ headers: { 'x-request-id': requestId } });

  async function credentialCount(connectionId: string): Promise<number> {
    const { rows } = await world.app.db.query(
      'SELECT 1 FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
      [world.tenant.orgId, connectionId],
    );
    return rows.length;
  }
  async function pluginCount(name: string): Promise<number> {
    const { rows } = await world.app.db.query('SELECT 1 FROM plugins WHERE organization_id = $1 AND name = $2', [
      world.tenant.orgId,
      name,
    ]);
    return rows.length;
  }
  async function connectionNames(): Promise<string[]> {
    const list = await must(fresh().get('/v1/mcp-connections?limit=100'), 200);
    return list.connections.map((connection: { name: string }) => connection.name);
  }
  async function teamMemberIds(): Promise<string[]> {
    const list = await must(fresh().get(`/v1/orgs/${world.tenant.orgId}/teams`), 200);
    return list.teams.find((team: { id: string }) => team.id === world.ids.teamId).memberIds;
  }
  async function isMember(memberId: string): Promise<boolean> {
    const list = await must(fresh().get(`/v1/orgs/${world.tenant.orgId}/members?limit=100`), 200);
    return list.members.some((member: { id: string }) => member.id === memberId);
  }

  test('a session whose authentication is an hour old does none of them: 403 reauth, and nothing changed', {
    timeout: 600_000,
  }, async () => {
    const bypasses: string[] = [];
    const traces: string[] = [];
    for (const attack of attacks) {
      const requestId = freshRequestId();
      const response = await attack.send((token) => api(world.app.url, token), requestId);
      if (
        response.status !== 403 ||
        response.body?.error !== reauthBody.error ||
        response.body?.reason !== reauthBody.reason
      ) {
        bypasses.push(`${attack.name}: ${response.status} ${response.text.slice(0, 120)}`);
      }
      // The refusal is recorded (a `denied` event); nothing else is.
      const written = (await eventsOfRequest(world.app, requestId))
        .filter((event) => event.outcome !== 'denied')
        .map((event) => event.action);
      if (written.length > 0) traces.push(`${attack.name}: wrote ${written.join(', ')}`);
      try {
        await attack.unchanged();
      } catch (error) {
        traces.push(`${attack.name}: ${(error as Error).message}`);
      }
    }
    assert.deepEqual(
      bypasses,
      [],
      `${bypasses.length} of ${attacks.length} privileged operations were done with an old session`,
    );
    assert.deepEqual(traces, [], 'the refused operations changed nothing');
  });

  test('what is not privileged stays open to the same old session', { timeout: 600_000 }, async () => {
    const { tenant, ids } = world;
    const org = tenant.orgId;
    const asOwner = api(world.app.url, stale.owner);
    const asMember = api(world.app.url, stale.member);
    const perMemberKeyed = await must(
      fresh().post('/v1/mcp-connections', {
        name: 'Own keys',
        url: world.mcpKeyed.url,
        authType: 'apikey',
        credentialMode: 'per_member',
        access: { orgWide: true },
      }),
      201,
    );
    const leaver = await signUp(world.app.url, 'leaver');
    await addMember(world.app.url, tenant.owner, org, leaver, 'member');
    const leaverSession = await signInAgain(leaver);
    await ageSession(world.app, leaverSession);

    const open: Array<[string, () => Promise<ApiResponse>, number]> = [
      ['an admin creates an (empty) team', () => asOwner.post(`/v1/orgs/${org}/teams`, { name: 'Empty team' }), 201],
      [
        'an admin disables a bot',
        () => asOwner.patch(`/v1/messenger/connections/${ids.messengerConnectionId}`, { enabled: false }),
        200,
      ],
      [
        'an admin enables it again',
        () => asOwner.patch(`/v1/messenger/connections/${ids.messengerConnectionId}`, { enabled: true }),
        200,
      ],
      ['an admin probes a connection', () => asOwner.post(`/v1/mcp-connections/${ids.mcpConnectionId}/test`), 200],
      ['a member mints an install link (no rotation)', () => asMember.post(`/v1/orgs/${org}/install-links`, {}), 201],
      [
        'a member stores their own API key',
        () => asMember.put(`/v1/mcp-connections/${perMemberKeyed.id}/credentials`, { apiKey: world.planted.mcpApiKey }),
        200,
      ],
      [
        'a member connects their own OAuth account',
        () => asMember.post(`/v1/mcp-connections/${ids.oauthConnectionId}/oauth/authorize`),
        200,
      ],
      [
        'a member disconnects their own OAuth account',
        () => asMember.delete(`/v1/mcp-connections/${ids.connectedOauthConnectionId}/credentials`),
        204,
      ],
      [
        'a member keeps a memory',
        () => asMember.post('/v1/memory', { content: 'an old session may still remember' }),
        201,
      ],
      [
        'a member leaves the organization',
        () => api(world.app.url, leaverSession).delete(`/v1/orgs/${org}/members/${leaver.memberId}`),
        204,
      ],
    ];
    const refused: string[] = [];
    for (const [name, send, status] of open) {
      const response = await send();
      if (response.status !== status)
        refused.push(`${name}: expected ${status}, got ${response.status} ${response.text.slice(0, 120)}`);
    }
    assert.deepEqual(refused, []);
  });

  test('a caller who may not do the privileged thing at all is told so, not asked to re-authenticate', {
    timeout: 600_000,
  }, async () => {
    const { tenant, ids } = world;
    const org = tenant.orgId;
    const asMember = api(world.app.url, stale.member);
    const staleOther = await signInAgain(tenant.otherAdmin);
    await ageSession(world.app, staleOther);
    const refusals: Array<[string, () => Promise<ApiResponse>, number, string]> = [
      [
        'a member invites someone',
        () => asMember.post(`/v1/orgs/${org}/invitations`, { email: 'friend@example.test', role: 'admin' }),
        403,
        'forbidden',
      ],
      [
        'a member creates an API key',
        () => asMember.post(`/v1/orgs/${org}/api-keys`, { name: 'mine', role: 'member' }),
        403,
        'forbidden',
      ],
      [
        'a member adds someone to a team',
        () => asMember.post(`/v1/orgs/${org}/teams/${ids.teamId}/members`, { memberId: tenant.admin.memberId }),
        403,
        'forbidden',
      ],
      [
        'a member changes a role',
        () => asMember.patch(`/v1/orgs/${org}/members/${tenant.admin.memberId}`, { role: 'member' }),
        403,
        'forbidden',
      ],
      [
        'an admin transfers ownership',
        () =>
          api(world.app.url, stale.admin).post(`/v1/orgs/${org}/transfer-ownership`, {
            memberId: tenant.admin.memberId,
          }),
        403,
        'forbidden',
      ],
      [
        'a member sets the audit stream',
        () => asMember.put(`/v1/orgs/${org}/audit-stream`, { url: world.receiverUrl, enabled: false }),
        403,
        'forbidden',
      ],
      [
        'a member removes another member',
        () => asMember.delete(`/v1/orgs/${org}/members/${tenant.admin.memberId}`),
        403,
        'forbidden',
      ],
      [
        'a member replaces a shared API key',
        () => asMember.put(`/v1/mcp-connections/${ids.mcpKeyedConnectionId}/credentials`, { apiKey: 'a-key-of-mine' }),
        403,
        'forbidden',
      ],
      [
        'a member disconnects a shared credential',
        () => asMember.delete(`/v1/mcp-connections/${ids.mcpKeyedConnectionId}/credentials`),
        403,
        'forbidden',
      ],
      [
        'a member authorizes a shared OAuth identity',
        () => asMember.post(`/v1/mcp-connections/${sharedOAuthId}/oauth/authorize`),
        403,
        'forbidden',
      ],
      [
        'a member creates an MCP connection',
        () =>
          asMember.post('/v1/mcp-connections', {
            name: 'Mine',
            url: world.mcp.url,
            authType: 'none',
            credentialMode: 'shared',
            access: { orgWide: true },
          }),
        403,
        'forbidden',
      ],
      [
        'a member installs a plugin',
        () => asMember.post('/v1/plugins', { manifest: { name: 'Mine', version: '1.0.0' } }),
        403,
        'forbidden',
      ],
      [
        'a member repoints a bot',
        () =>
          asMember.patch(`/v1/messenger/connections/${ids.messengerConnectionId}`, {
            deliveryUrl: `${world.receiverUrl}?mine`,
          }),
        403,
        'forbidden',
      ],
      [
        'an owner who is no operator sets a plan',
        () => api(world.app.url, stale.owner).put(`/v1/admin/orgs/${org}/plan`, { plan: 'free' }),
        403,
        'forbidden',
      ],
      [
        "another organization's admin authorizes this one's shared identity",
        () => api(world.app.url, staleOther).post(`/v1/mcp-connections/${sharedOAuthId}/oauth/authorize`),
        404,
        'connection_not_found',
      ],
      [
        "another organization's admin removes this one's member",
        () => api(world.app.url, staleOther).delete(`/v1/orgs/${org}/members/${tenant.member.memberId}`),
        404,
        'organization_not_found',
      ],
      [
        "another organization's admin invites into this one",
        () =>
          api(world.app.url, staleOther).post(`/v1/orgs/${org}/invitations`, {
            email: 'spy@example.test',
            role: 'admin',
          }),
        404,
        'organization_not_found',
      ],
      [
        "another organization's admin revokes this one's API key",
        () => api(world.app.url, staleOther).delete(`/v1/orgs/${org}/api-keys/${ids.apiKeyId}`),
        404,
        'organization_not_found',
      ],
    ];
    const wrong: string[] = [];
    for (const [name, send, status, error] of refusals) {
      const response = await send();
      if (response.status !== status || response.body?.error !== error)
        wrong.push(`${name}: expected ${status} ${error}, got ${response.status} ${response.text.slice(0, 120)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
