// The suite's concurrency guarantees, held across three `orgplane start` processes on one
// PostgreSQL (as in production behind a load balancer), with the requests of each check spread
// over the processes and fired together:
// - optimistic edits of one MCP connection: exactly one edit from a given `updatedAt` wins,
// - webhook claims: one update_id is accepted exactly once,
// - the sign-in rate limit is counted in the database, not per process,
// - SCIM token rotation: of concurrent rotations exactly one token works afterwards, on every process.
// PostgreSQL only: the embedded database belongs to a single process.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, signUp, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { startServerProcess, type ServerProcess } from '../support/process.ts';

const skip = testBackend !== 'postgres' && 'needs PostgreSQL: several processes share one database';

describe('three server processes on one PostgreSQL', { skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  let platform: BotPlatform;
  let dns: TestDnsServer;
  let mcp: RunningServer;
  const servers: ServerProcess[] = [];
  let tenant: Tenant;
  let direct: pg.Client;
  const at = (i: number) => servers[i % servers.length]!.url;

  before(async () => {
    database = await createPostgresDatabase();
    dns = await startDnsServer();
    [platform, mcp] = await Promise.all([startBotPlatform(), startStreamableServer()]);
    const env = {
      DATABASE_URL: database.url,
      ORGPLANE_SECRET_KEY: `v1:${randomBytes(32).toString('base64')}`,
      MESSENGER_API_ROOT: platform.url,
      ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8,::1/128',
      DNS_SERVERS: dns.address,
      RUN_WORKERS: 'false',
      LOG_LEVEL: 'warn',
    };
    // The first one migrates; the other two then start together.
    servers.push(await startServerProcess(env));
    servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
    tenant = await createTenant(at(0));
    direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
  });

  after(async () => {
    await direct?.end();
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all([platform?.close(), mcp?.close(), dns?.close()]);
    await database?.drop();
  });

  it('optimistic edits of one MCP connection: exactly one of 30 concurrent edits from the same updatedAt wins', async () => {
    const created = await api(at(0), tenant.admin.token).post('/v1/mcp-connections', {
      name: 'Shared docs',
      url: mcp.url,
      authType: 'none',
      credentialMode: 'shared',
      access: { orgWide: true },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api(at(i), i % 2 ? tenant.owner.token : tenant.admin.token).put(`/v1/mcp-connections/${id}`, {
          name: `Edit ${i}`,
          url: mcp.url,
          authType: 'none',
          credentialMode: 'shared',
          access: { orgWide: true },
          expectedUpdatedAt: created.body.updatedAt,
        }),
      ),
    );
    const won = answers.filter((answer) => answer.status === 200);
    const lost = answers.filter((answer) => answer.status === 409);
    assert.equal(won.length, 1, answers.map((answer) => answer.status).join(','));
    assert.equal(lost.length, 29);
    assert.ok(lost.every((answer) => answer.body.error === 'connection_conflict'));
    const stored = await api(at(2), tenant.admin.token).get(`/v1/mcp-connections/${id}`);
    assert.equal(stored.body.name ?? stored.body.connection?.name, won[0]!.body.connection?.name ?? won[0]!.body.name);
  });

  it('webhook claims: one update_id sent 60 times across the processes is accepted once', async () => {
    const bot = platform.addBot();
    const created = await api(at(1), tenant.admin.token).post('/v1/messenger/connections', {
      botToken: bot.token,
      deliveryUrl: 'http://127.0.0.1:9/unused',
    });
    assert.equal(created.status, 201, created.text);
    const connectionId = created.body.connection.id;
    const secret = platform.webhookOf(bot.token)!.secretToken!;
    const update = platform.messageUpdate(bot.token, { chatId: 42, text: 'once' });
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api(at(i)).post(`/v1/webhooks/messenger/${connectionId}`, update, {
          headers: { 'x-telegram-bot-api-secret-token': secret },
        }),
      ),
    );
    assert.ok(
      answers.every((answer) => answer.status === 200),
      answers.map((answer) => answer.status).join(','),
    );
    assert.equal(answers.filter((answer) => answer.body.accepted === true).length, 1);
    const { rows } = await direct.query('SELECT count(*)::int AS n FROM messenger_updates WHERE connection_id = $1', [
      connectionId,
    ]);
    assert.equal(rows[0].n, 1);
  });

  it('the sign-in limit (10 per account per window) holds across processes: 30 concurrent wrong passwords, 10 answered, 20 refused', async () => {
    const user = await signUp(at(0), 'guessed');
    // The limit counts in fixed 15-minute windows aligned to the epoch: a burst must not straddle two.
    const intoWindow = (Date.now() / 1000) % (15 * 60);
    if (intoWindow > 15 * 60 - 30)
      await new Promise((resolve) => setTimeout(resolve, (15 * 60 - intoWindow + 1) * 1000));
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api(at(i)).post('/v1/auth/sign-in', { email: user.email, password: `wrong-${i}` }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 429).length, 20, statuses.join(','));
    // And the right password is refused too while the window lasts, on every process.
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await api(at(i)).post('/v1/auth/sign-in', { email: user.email, password: user.password })).status,
        429,
      );
  });

  it('SCIM token rotation: of 12 concurrent rotations exactly one token works afterwards, on every process', async () => {
    await direct.query(`UPDATE organizations SET plan = 'enterprise' WHERE id = $1`, [tenant.orgId]);
    const domain = `multi-${randomBytes(3).toString('hex')}.example.test`;
    const sso = await api(at(0), tenant.owner.token).put('/v1/sso/connection', {
      domain,
      issuer: 'https://idp.example.test',
      clientId: 'c',
    });
    assert.equal(sso.status, 200, sso.text);
    dns.setTxt(sso.body.connection.verification.recordName, [sso.body.connection.verification.recordValue]);
    assert.equal((await api(at(1), tenant.owner.token).post('/v1/sso/verify-domain')).status, 200);
    const rotations = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api(at(i), i % 2 ? tenant.owner.token : tenant.admin.token).post('/v1/scim/token'),
      ),
    );
    assert.ok(
      rotations.every((rotation) => rotation.status === 200),
      rotations.map((rotation) => `${rotation.status} ${rotation.text.slice(0, 80)}`).join('\n'),
    );
    const tokens = rotations.map((rotation) => rotation.body.scimToken as string);
    assert.equal(new Set(tokens).size, 12, 'every rotation issued its own token');
    const working: string[] = [];
    for (const token of tokens) {
      const statuses = await Promise.all(
        servers.map((server) =>
          api(server.url, token)
            .get('/scim/v2/Users')
            .then((response) => response.status),
        ),
      );
      assert.ok(
        statuses.every((status) => status === statuses[0]),
        `a token is judged the same by every process: ${statuses}`,
      );
      if (statuses[0] === 200) working.push(token);
      else assert.equal(statuses[0], 401);
    }
    assert.equal(working.length, 1);
    const { rows } = await direct.query('SELECT count(*)::int AS n FROM scim_connectors WHERE organization_id = $1', [
      tenant.orgId,
    ]);
    assert.equal(rows[0].n, 1, 'one connector, however many rotations raced to create it');
  });
});
