// A module registered without a dependency it declares fails as the app boots, naming what it lacks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerInstallLinks } from '../../src/modules/install-links/index.ts';
import { registerMemory } from '../../src/modules/memory/index.ts';
import { registerMessenger } from '../../src/modules/messenger/index.ts';
import { registerScim } from '../../src/modules/scim/index.ts';
import { registerSso } from '../../src/modules/sso/index.ts';

test('install links, SSO, SCIM, messenger and memory refuse to register without their dependencies', async () => {
  const app = Fastify();
  try {
    await assert.rejects(registerInstallLinks(app, { publicUrl: 'http://x' } as never), /^Error: install-links: registered without db, membership, organizations, rateLimiter, desktopDownloadUrl$/);
    await assert.rejects(registerSso(app, {} as never), /^Error: sso: registered without db, organizations, secrets, dns$/);
    await assert.rejects(registerScim(app, {} as never), /^Error: scim: registered without db, membership, users, sso, publicUrl$/);
    await assert.rejects(registerMessenger(app, {} as never), /^Error: messenger: registered without db, config, secrets, membership$/);
    await assert.rejects(registerMemory(app, {} as never), /^Error: memory: registered without db$/);
  } finally {
    await app.close();
  }
});
