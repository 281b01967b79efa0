// A module registered without a dependency it declares fails as the app boots, naming what it lacks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerAdmin } from '../../src/modules/admin/index.ts';
import { registerApiKeys } from '../../src/modules/api-keys/index.ts';
import { registerInstallLinks } from '../../src/modules/install-links/index.ts';
import { registerInvitations } from '../../src/modules/invitations/index.ts';
import { createAuditModule } from '../../src/modules/audit/index.ts';
import { createMcpConnectionsModule } from '../../src/modules/mcp-connections/index.ts';
import { registerMembers } from '../../src/modules/members/index.ts';
import { registerMemory } from '../../src/modules/memory/index.ts';
import { createMessengerModule } from '../../src/modules/messenger/index.ts';
import { registerScim } from '../../src/modules/scim/index.ts';
import { registerOrganizations } from '../../src/modules/organizations/index.ts';
import { registerSso } from '../../src/modules/sso/index.ts';
import { registerRoles } from '../../src/modules/roles/index.ts';
import { registerTeams } from '../../src/modules/teams/index.ts';
import { registerUsers } from '../../src/modules/users/index.ts';

test('every module refuses to register without its dependencies, naming them', async () => {
  const app = Fastify();
  try {
    await assert.rejects(
      registerInstallLinks(app, { publicUrl: 'http://x' } as never),
      /^Error: install-links: registered without db, membership, organizations, rateLimiter$/,
    );
    await assert.rejects(
      registerSso(app, {} as never),
      /^Error: sso: registered without db, organizations, secrets, dns, membership, users, teams, roleGrants, outbound, publicUrl, signIn, rateLimiter$/,
    );
    await assert.rejects(
      registerScim(app, {} as never),
      /^Error: scim: registered without db, membership, users, sso, publicUrl$/,
    );
    assert.throws(
      () => createMessengerModule({} as never),
      /^Error: messenger: registered without db, config, secrets, outbound, membership, log$/,
    );
    assert.throws(
      () => createAuditModule({ db: {} } as never),
      /^Error: audit: registered without membership, secrets, outbound, retention, streamSettings, log$/,
    );
    await assert.rejects(registerRoles(app, {} as never), /^Error: roles: registered without db, membership$/);
    await assert.rejects(registerMemory(app, {} as never), /^Error: memory: registered without db$/);
    await assert.rejects(
      registerUsers(app, { db: {} } as never),
      /^Error: users: registered without rateLimiter, signUpEnabled, signUpAttemptsPerAddress, membership, organizations, passwordSignInPolicy, redirectUriAllowed$/,
    );
    await assert.rejects(
      registerOrganizations(app, {} as never),
      /^Error: organizations: registered without db, membership, erasers$/,
    );
    await assert.rejects(
      registerMembers(app, {} as never),
      /^Error: members: registered without membership, roleGrants$/,
    );
    await assert.rejects(
      registerInvitations(app, { membership: {} } as never),
      /^Error: invitations: registered without db, users, organizations, mailer, publicUrl, roleGrants$/,
    );
    await assert.rejects(
      registerTeams(app, {} as never),
      /^Error: teams: registered without db, membership, roleGrants$/,
    );
    await assert.rejects(
      registerApiKeys(app, {} as never),
      /^Error: api-keys: registered without db, membership, roleGrants$/,
    );
    await assert.rejects(
      registerAdmin(app, {} as never),
      /^Error: admin: registered without db, organizations, users$/,
    );
    await assert.rejects(
      createMcpConnectionsModule({ teams: {} } as never),
      /^Error: mcp-connections: registered without db, config, secrets, outbound, members, log$/,
    );
  } finally {
    await app.close();
  }
});
