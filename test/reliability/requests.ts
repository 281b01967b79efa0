// Valid requests for every operation of the API in a world: real ids of organization A and bodies
// that pass validation, so that what a caller gets back depends on who they are, not on their input.

import { randomBytes } from 'node:crypto';
import { addMember, signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { followRedirects, type TestIdp } from '../support/oidc-idp.ts';
import { pkcePair } from '../sso/oidc-support.ts';
import { authorizeBody, codeOf, loopbackRedirect } from '../desktop-sign-in/support.ts';
import { realPathValues, type World } from './world.ts';

const unique = () => randomBytes(4).toString('hex');

export interface Prepared {
  path: Record<string, string>;
  query?: string;
  body?: unknown;
  contentType?: string;
}

/**
 * A valid request for one cell. Operations that remove or change what later cells need get a fresh
 * target per cell, so that every cell tests the caller's rights and not what an earlier cell did.
 */
export async function prepareRequest(world: World, operationId: string, path: string): Promise<Prepared> {
  const { tenant, ids } = world;
  const values = realPathValues(world, path);
  const asOwner = api(world.app.url, tenant.owner.token);
  switch (operationId) {
    case 'bootstrap':
      return {
        path: values,
        body: {
          email: `boot.${unique()}@example.test`,
          password: 'a-long-password-1',
          name: 'Boot',
          organizationName: 'Boot',
        },
      };
    case 'signUp':
      return {
        path: values,
        body: { email: `signup.${unique()}@example.test`, password: 'a-long-password-1', name: 'New Person' },
      };
    case 'signIn': {
      // A fresh account per cell: sign-in is rate limited per account, and that is not what this cell tests.
      const user = await signUp(world.app.url, 'signin');
      return { path: values, body: { email: user.email, password: user.password } };
    }
    // A wrong password: the cell shows who reaches the check, and a failed step-up changes nothing.
    case 'reauthenticate':
      return { path: values, body: { password: 'not-the-password' } };
    case 'startSsoSignIn':
      return {
        path: values,
        body: {
          email: `someone.${unique()}@unconfigured.example`,
          redirectUri: 'http://127.0.0.1:9/done',
          codeChallenge: 'a'.repeat(43),
          codeChallengeMethod: 'S256',
        },
      };
    case 'exchangeSsoCode':
      return { path: values, body: { code: 'never-issued', codeVerifier: 'b'.repeat(43) } };
    case 'authorizeDesktopSignIn':
      return {
        path: values,
        body: {
          redirectUri: 'http://127.0.0.1:9/desktop',
          codeChallenge: 'c'.repeat(43),
          codeChallengeMethod: 'S256',
          state: 'matrix',
        },
      };
    case 'cancelDesktopSignIn':
      return { path: values, body: { redirectUri: 'http://127.0.0.1:9/desktop', state: 'matrix' } };
    case 'exchangeDesktopSignInCode':
      return {
        path: values,
        body: { code: 'never-issued', codeVerifier: 'd'.repeat(43), redirectUri: 'http://127.0.0.1:9/desktop' },
      };
    case 'createOrganization':
      return { path: values, body: { name: `Org ${unique()}` } };
    case 'setActiveOrganization':
      return { path: values, body: { organizationId: tenant.orgId } };
    case 'createInvitation':
      return { path: values, body: { email: `invitee.${unique()}@example.test`, role: 'member' } };
    case 'acceptInvitation':
      return { path: values };
    case 'resendInvitation':
    case 'revokeInvitation': {
      const invitation = await asOwner.post(`/v1/orgs/${tenant.orgId}/invitations`, {
        email: `doomed.${unique()}@example.test`,
        role: 'member',
      });
      return { path: { ...values, invitationId: invitation.body.invitation.id } };
    }
    case 'changeMemberRole': {
      const user = await signUp(world.app.url, 'rolechange');
      await addMember(world.app.url, tenant.owner, tenant.orgId, user, 'member');
      return { path: { ...values, memberId: user.memberId }, body: { role: 'admin' } };
    }
    case 'removeMember': {
      const user = await signUp(world.app.url, 'removed');
      await addMember(world.app.url, tenant.owner, tenant.orgId, user, 'member');
      return { path: { ...values, memberId: user.memberId } };
    }
    case 'transferOwnership':
      return { path: values, body: { memberId: tenant.admin.memberId } };
    case 'renameOrganization':
      return { path: values, body: { name: `Organization A ${unique()}` } };
    case 'deleteOrganization': {
      // A doomed organization per cell with A's three people in the same roles, so the caller's role decides
      // and organization A outlives the cell; everyone's session goes back to A.
      const name = `Doomed ${unique()}`;
      const created = await asOwner.post('/v1/orgs', { name });
      const organizationId: string = created.body.organization.id;
      await addMember(world.app.url, tenant.owner, organizationId, { ...tenant.admin }, 'admin');
      await addMember(world.app.url, tenant.owner, organizationId, { ...tenant.member }, 'member');
      for (const user of [tenant.owner, tenant.admin, tenant.member])
        await api(world.app.url, user.token).put('/v1/session/active-organization', { organizationId: tenant.orgId });
      return { path: { ...values, organizationId }, body: { confirm: name } };
    }
    case 'createTeam':
      return { path: values, body: { name: `Team ${unique()}` } };
    case 'addTeamMember':
      return { path: values, body: { memberId: tenant.admin.memberId } };
    case 'removeTeamMember': {
      await asOwner.post(`/v1/orgs/${tenant.orgId}/teams/${ids.teamId}/members`, { memberId: tenant.admin.memberId });
      return { path: { ...values, memberId: tenant.admin.memberId } };
    }
    case 'updateTeam':
      return { path: values, body: { name: `Platform team ${unique()}` } };
    case 'deleteTeam': {
      const team = await asOwner.post(`/v1/orgs/${tenant.orgId}/teams`, { name: `Doomed ${unique()}` });
      return { path: { ...values, teamId: team.body.team.id } };
    }
    case 'getMemberPermissions':
      return { path: { ...values, memberId: tenant.admin.memberId } };
    case 'createRole':
      return { path: values, body: { name: `Role ${unique()}`, permissions: ['audit.view'] } };
    case 'updateRole':
      return { path: { ...values, roleId: ids.roleId }, body: { description: `changed ${unique()}` } };
    case 'deleteRole': {
      const role = await asOwner.post(`/v1/orgs/${tenant.orgId}/roles`, {
        name: `Doomed ${unique()}`,
        permissions: [],
      });
      return { path: { ...values, roleId: role.body.role.id } };
    }
    case 'createApiKey':
      return { path: values, body: { name: `key ${unique()}`, role: 'member' } };
    case 'revokeApiKey': {
      const key = await asOwner.post(`/v1/orgs/${tenant.orgId}/api-keys`, {
        name: `doomed ${unique()}`,
        role: 'member',
      });
      return { path: { ...values, apiKeyId: key.body.apiKey.id } };
    }
    case 'setOrganizationPlan':
    case 'updateInstanceOrganization':
      return { path: values, body: { plan: 'enterprise' } };
    case 'addInstanceAdmin':
      return { path: values, body: { email: tenant.member.email } };
    case 'createMcpConnection':
      return {
        path: values,
        body: {
          name: `Docs ${unique()}`,
          url: world.mcp.url,
          authType: 'none',
          credentialMode: 'shared',
          access: { orgWide: true },
        },
      };
    case 'editMcpConnection': {
      const current = await asOwner.get(`/v1/mcp-connections/${ids.mcpConnectionId}`);
      return {
        path: values,
        body: {
          name: `Docs ${unique()}`,
          url: world.mcp.url,
          authType: 'none',
          credentialMode: 'shared',
          access: { orgWide: true },
          expectedUpdatedAt: current.body.updatedAt ?? current.body.connection?.updatedAt,
        },
      };
    }
    case 'deleteMcpConnection': {
      const created = await asOwner.post('/v1/mcp-connections', {
        name: `Doomed ${unique()}`,
        url: world.mcp.url,
        authType: 'none',
        credentialMode: 'shared',
        access: { orgWide: true },
      });
      return { path: { ...values, connectionId: created.body.id } };
    }
    case 'replaceMcpConnectionAccess':
      return { path: values, body: { access: { orgWide: true } } };
    case 'setMcpConnectionToolPolicy':
      return { path: values, body: { mode: 'deny_list', tools: ['echo'], destructiveNeedsApproval: true } };
    case 'setMcpConnectionApiKey':
      return { path: { ...values, connectionId: ids.mcpKeyedConnectionId }, body: { apiKey: world.planted.mcpApiKey } };
    case 'disconnectMcpConnection':
      return { path: { ...values, connectionId: ids.mcpKeyedConnectionId } };
    case 'authorizeMcpConnection':
      return { path: { ...values, connectionId: ids.oauthConnectionId } };
    case 'installPlugin':
      return { path: values, body: { manifest: { name: `Plugin ${unique()}`, version: '1.0.0' } } };
    case 'uninstallPlugin': {
      const plugin = await asOwner.post('/v1/plugins', { manifest: { name: `Doomed ${unique()}`, version: '1.0.0' } });
      return { path: { ...values, pluginId: plugin.body.plugin?.id ?? plugin.body.id } };
    }
    case 'mcpOAuthCallbackShared':
    case 'mcpOAuthCallbackIsolated':
      return { path: { ...values, connectionId: ids.oauthConnectionId }, query: 'code=abc&state=made-up-state' };
    case 'createInstallLink':
      return { path: values, body: {} };
    case 'putSsoConnection':
      return { path: values, body: { domain: world.domain, issuer: 'https://idp.example.test', clientId: 'acme-sso' } };
    case 'createMessengerConnection': {
      const bot = world.platform.addBot();
      return { path: values, body: { botToken: bot.token, deliveryUrl: world.receiverUrl } };
    }
    case 'updateMessengerConnection':
      return { path: values, body: { deliveryUrl: world.receiverUrl } };
    case 'deleteMessengerConnection': {
      const bot = world.platform.addBot();
      const created = await asOwner.post('/v1/messenger/connections', {
        botToken: bot.token,
        deliveryUrl: world.receiverUrl,
      });
      return { path: { ...values, connectionId: created.body.connection.id } };
    }
    case 'listMessengerUpdates':
      return { path: values };
    case 'receiveMessengerWebhook':
      return { path: values, body: { update_id: 1 } };
    // The stream is set disabled: the matrix checks who may set it, not deliveries.
    case 'putAuditStream':
      return { path: values, body: { url: world.receiverUrl, enabled: false } };
    case 'getAuditStream':
    case 'deleteAuditStream': {
      const put = await asOwner.put(`/v1/orgs/${tenant.orgId}/audit-stream`, {
        url: world.receiverUrl,
        enabled: false,
      });
      if (put.status !== 200) throw new Error(`audit stream: ${put.status} ${put.text}`);
      return { path: values };
    }
    // Unique content: the same content as a live memory of the caller is not created again (200).
    case 'createMemory':
      return { path: values, body: { content: `a fact worth keeping ${unique()}` } };
    case 'updateMemory':
      return { path: values, body: { tags: ['reviewed'] } };
    case 'createMemories':
      return { path: values, body: { memories: [{ content: 'one' }, { content: 'two' }] } };
    case 'searchMemories':
      return { path: values, query: 'q=deploy' };
    case 'deleteMemory': {
      const memory = await api(world.app.url, tenant.member.token).post('/v1/memory', {
        content: `doomed ${unique()}`,
      });
      return { path: { ...values, id: memory.body.memory?.id ?? memory.body.id } };
    }
    case 'scimCreateUser':
    case 'scimReplaceUser':
      return {
        path: values,
        body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `bob.${unique()}@${world.domain}` },
        contentType: 'application/scim+json',
      };
    case 'scimCreateGroup':
    case 'scimReplaceGroup':
      return {
        path: values,
        body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `G ${unique()}` },
        contentType: 'application/scim+json',
      };
    case 'scimPatchUser':
    case 'scimPatchGroup':
      return {
        path: values,
        body: {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', path: 'displayName', value: 'X' }],
        },
        contentType: 'application/scim+json',
      };
    default:
      return { path: values };
  }
}

/**
 * A one-time code from a real SSO sign-in, for exchangeSsoCode: the world's connection (its verified
 * domain kept) is pointed at a real OpenID Provider with just-in-time provisioning, and a new person of
 * the domain signs in.
 */
export async function realSsoCode(world: World, idp: TestIdp): Promise<{ code: string; codeVerifier: string }> {
  const put = await api(world.app.url, world.tenant.owner.token).put('/v1/sso/connection', {
    domain: world.domain,
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    jitProvisioning: { enabled: true },
  });
  if (put.status !== 200) throw new Error(`PUT /v1/sso/connection: ${put.status} ${put.text}`);
  const email = `sso.${Date.now().toString(36)}.${unique()}@${world.domain}`;
  const redirectUri = 'http://127.0.0.1:9/sso-done';
  const pkce = pkcePair();
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email,
    redirectUri,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
  });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  idp.signInAs({ sub: `sub-${email}`, email, email_verified: true, name: 'Sso Person' });
  const reached = await followRedirects(started.body.authorizationUrl, redirectUri);
  const code = reached.location ? new URL(reached.location).searchParams.get('code') : null;
  if (!code)
    throw new Error(
      `the SSO sign-in did not reach the redirect URI with a code: ${reached.status} ${reached.text.slice(0, 200)}`,
    );
  return { code, codeVerifier: pkce.verifier };
}

/** A desktop sign-in code the owner's session got, with the app's verifier and redirect, for exchangeDesktopSignInCode. */
export async function realDesktopCode(
  world: World,
): Promise<{ code: string; codeVerifier: string; redirectUri: string }> {
  const pkce = pkcePair();
  const authorized = await api(world.app.url, world.tenant.owner.token).post(
    '/v1/auth/desktop/authorize',
    authorizeBody(pkce.challenge),
  );
  if (authorized.status !== 200) throw new Error(`authorize: ${authorized.status} ${authorized.text}`);
  return { code: codeOf(authorized.body.redirectTo), codeVerifier: pkce.verifier, redirectUri: loopbackRedirect };
}
