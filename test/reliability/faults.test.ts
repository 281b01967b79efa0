// Faults (PostgreSQL only: the embedded database cannot become unreachable, and a killed process is
// only interesting when the database outlives it).
// 1. The database becomes unreachable under write load, several times: the server answers 503
//    meanwhile (never a 500, never a hang), serves again without a restart, and every write it
//    acknowledged is in the database afterwards. The database is cut with a TCP proxy in front of
//    it; the machine's PostgreSQL, which other tests use, is never stopped.
// 2. An `orgplane start` process killed with SIGKILL in the middle of multi-row writes leaves no
//    half-written state: every batch is all there or not there at all.

import { packageVersion } from '../../src/version.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresDatabase, startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { createTenant, signUp, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startStreamableServer } from '../support/mcp-servers.ts';
import { startServerProcess, type ServerProcess } from '../support/process.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const onlyPostgres =
  testBackend !== 'postgres' && 'needs PostgreSQL: the embedded database cannot be cut off or outlive its process';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the database unreachable under load', { skip: onlyPostgres }, () => {
  let app: TestApp;
  let proxy: TcpProxy;
  let database: { url: string; drop(): Promise<void> };
  let tenant: Tenant;

  before(async () => {
    database = await createPostgresDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    app = await startTestApp({ databaseUrl: url.toString(), logLevel: 'warn' });
    tenant = await createTenant(app.url);
  });
  after(async () => {
    await proxy.restore().catch(() => {});
    await app?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 while cut off, recovers without a restart each time, and loses no acknowledged write', {
    timeout: 170_000,
  }, async () => {
    const faults = 3;
    const acknowledged: { kind: 'memory' | 'team'; id: string; content: string }[] = [];
    const statuses = new Map<number, number>();
    const unexpected: string[] = [];
    let stop = false;
    let phase: 'up' | 'down' = 'up';
    const answersWhileDown = new Map<number, number>();

    const writer = async (worker: number) => {
      for (let n = 0; !stop; n++) {
        const content = `w${worker}-${n}-${randomBytes(4).toString('hex')}`;
        const team = n % 3 === 0;
        let response;
        try {
          response = team
            ? await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, { name: content })
            : await api(app.url, tenant.member.token).post('/v1/memory', { content });
        } catch (error) {
          unexpected.push(`request failed outright: ${(error as Error).message}`);
          continue;
        }
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (phase === 'down') answersWhileDown.set(response.status, (answersWhileDown.get(response.status) ?? 0) + 1);
        if (response.status === 201) {
          acknowledged.push(
            team
              ? { kind: 'team', id: response.body.team?.id ?? response.body.id, content }
              : { kind: 'memory', id: response.body.memory?.id ?? response.body.id, content },
          );
        } else if (response.status === 503) {
          assert.equal(response.body.error, 'service_unavailable', response.text);
          await sleep(20);
        } else {
          unexpected.push(`${response.status} ${response.text.slice(0, 200)}`);
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, worker) => writer(worker));
    const outageAnswers: string[] = [];
    const routesDuringOutage = (): [string, string | undefined][] => [
      ['/v1/me', tenant.member.token],
      ['/v1/org', tenant.member.token],
      [`/v1/orgs/${tenant.orgId}/members`, tenant.admin.token],
      ['/v1/mcp-connections', tenant.admin.token],
      ['/v1/memory', tenant.member.token],
      ['/v1/memory/search?q=deploy', tenant.member.token],
      ['/v1/messenger/connections', tenant.admin.token],
      ['/v1/sso/connection', tenant.admin.token],
      ['/v1/scim/connection', tenant.admin.token],
      ['/v1/install-links/opl_any-token-must-be-looked-up', undefined],
    ];

    let survived = 0;
    for (let fault = 0; fault < faults; fault++) {
      const before = acknowledged.length;
      while (acknowledged.length < before + 30) await sleep(20);
      phase = 'down';
      await proxy.cut();
      const downSince = statuses.get(503) ?? 0;
      while ((statuses.get(503) ?? 0) < downSince + 10) await sleep(20);
      assert.deepEqual((await api(app.url).get('/health')).body, { status: 'unavailable', version: packageVersion });
      // Every module, not only the writes under load, says 503 while the database is away.
      for (const [path, token] of routesDuringOutage()) {
        const response = await api(app.url, token).get(path);
        outageAnswers.push(`${path} ${response.status}`);
        if (response.status !== 503)
          unexpected.push(`during the outage GET ${path} -> ${response.status} ${response.text.slice(0, 160)}`);
      }
      await proxy.restore();
      phase = 'up';
      // Recovery without a restart: writes are acknowledged again.
      const resumedFrom = acknowledged.length;
      const deadline = Date.now() + 30_000;
      while (acknowledged.length < resumedFrom + 30 && Date.now() < deadline) await sleep(50);
      assert.ok(acknowledged.length >= resumedFrom + 30, `fault ${fault + 1}: writes did not resume`);
      survived++;
    }
    stop = true;
    await Promise.all(writers);

    assert.deepEqual(unexpected, [], 'every answer was 201 or 503');
    assert.ok((answersWhileDown.get(503) ?? 0) > 0, 'the server said 503 while the database was away');
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    try {
      const memories = new Set((await direct.query('SELECT id FROM memories')).rows.map((row) => row.id));
      const teams = new Set((await direct.query('SELECT id FROM teams')).rows.map((row) => row.id));
      const lost = acknowledged.filter((write) => !(write.kind === 'memory' ? memories : teams).has(write.id));
      assert.deepEqual(lost, [], 'no acknowledged write is missing');
    } finally {
      await direct.end();
    }
    console.log(
      `faults: ${survived} database outages survived under load; ${acknowledged.length} writes acknowledged, all present; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${outageAnswers.length} reads of ${routesDuringOutage().length} other routes during the outages, all 503`,
    );
  });
});

describe('SCIM while the database is unreachable', { skip: onlyPostgres }, () => {
  it('answers a SCIM 503, not a 500', async () => {
    const database = await createPostgresDatabase();
    const url = new URL(database.url);
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    const app = await startTestApp({ databaseUrl: url.toString(), logLevel: 'warn' });
    try {
      await proxy.cut();
      // A well-formed token has to be looked up: the database decides, and it is away.
      const response = await api(app.url, `opscim_${'A'.repeat(43)}`).get('/scim/v2/Users');
      assert.equal(response.status, 503, response.text);
      assert.equal(response.body.status, '503');
    } finally {
      await proxy.restore();
      await app.close();
      await proxy.close();
      await database.drop();
    }
  });
});

describe('the database dropped under a running server', { skip: onlyPostgres }, () => {
  it('answers 503, not 500', async () => {
    const database = await createPostgresDatabase();
    const app = await startTestApp({ databaseUrl: database.url, logLevel: 'warn' });
    try {
      const user = await signUp(app.url, 'dropped');
      await database.drop();
      const me = await api(app.url, user.token).get('/v1/me');
      assert.equal(me.status, 503, me.text);
      assert.equal(me.body.error, 'service_unavailable');
      const signIn = await api(app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
      assert.equal(signIn.status, 503, signIn.text);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});

describe('a process killed with SIGKILL mid-request', { skip: onlyPostgres }, () => {
  let database: { url: string; drop(): Promise<void> };
  const secretKey = `v1:${randomBytes(32).toString('base64')}`;
  let server: ServerProcess | undefined;

  before(async () => {
    database = await createPostgresDatabase();
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  it('leaves every multi-row write whole or absent, and the next process serves the same data', {
    timeout: 170_000,
  }, async () => {
    const env = { DATABASE_URL: database.url, ORGPLANE_SECRET_KEY: secretKey, LOG_LEVEL: 'warn' };
    const kills = 3;
    const batchSize = 500;
    const tags: string[] = [];
    let acknowledged = 0;
    for (let round = 0; round < kills; round++) {
      server = await startServerProcess(env);
      const user = await signUp(server.url, `killed${round}`);
      // Three clients send batches of memories (one transaction each) back to back; the process is
      // killed once some have been acknowledged, with the next ones in flight.
      let ackedThisRound = 0;
      let dead = false;
      const sender = async (client: number) => {
        for (let i = 0; !dead; i++) {
          const tag = `batch-${round}-${client}-${i}-${randomBytes(3).toString('hex')}`;
          tags.push(tag);
          const memories = Array.from({ length: batchSize }, (_, n) => ({
            content: `item ${n} of ${tag}`,
            tags: [tag],
          }));
          try {
            const response = await api(server!.url, user.token).post('/v1/memory/batch', { memories });
            if (response.status === 201) {
              acknowledged++;
              ackedThisRound++;
            }
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const inFlight = [0, 1, 2].map(sender);
      while (ackedThisRound < 2 + round) await sleep(5);
      await sleep(round * 7); // a different moment of the next batches' work each round
      dead = true;
      server.child.kill('SIGKILL');
      assert.equal(await server.exited, null, 'the process died of the signal');
      await Promise.allSettled(inFlight);
    }
    // A new process on the same database: healthy, and every batch is all there or not at all.
    server = await startServerProcess(env);
    assert.equal((await api(server.url).get('/health')).status, 200);
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ tag: string; count: number }>(
        `SELECT t AS tag, count(*)::int AS count FROM memories, unnest(tags) AS t WHERE t LIKE 'batch-%' GROUP BY t`,
      );
      const partial = rows.filter((row) => row.count !== batchSize);
      assert.deepEqual(partial, [], 'no batch is half written');
      assert.ok(rows.length >= acknowledged, 'every acknowledged batch is there');
      // The bank statistics change in the same transaction as the memories: they agree with the rows.
      const { rows: banks } = await direct.query(
        `SELECT b.id, b.doc_count, (SELECT count(*)::int FROM memories m WHERE m.bank_id = b.id) AS actual FROM memory_banks b`,
      );
      assert.deepEqual(
        banks.filter((bank) => Number(bank.doc_count) !== bank.actual),
        [],
        'bank statistics match the memories',
      );
      console.log(
        `faults: ${kills} SIGKILLs mid-request survived; ${rows.length} of ${tags.length} batches committed whole (${acknowledged} acknowledged), ${tags.length - rows.length} absent, none partial`,
      );
    } finally {
      await direct.end();
    }
  });

  it('an identity-changing MCP edit killed midway leaves old identity with its credential, or new identity without', {
    timeout: 170_000,
  }, async () => {
    const apiKey = `key-${randomBytes(8).toString('hex')}`;
    const [keyed, open] = await Promise.all([startStreamableServer({ apiKey }), startStreamableServer()]);
    const env = {
      DATABASE_URL: database.url,
      ORGPLANE_SECRET_KEY: secretKey,
      LOG_LEVEL: 'warn',
      ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8,::1/128',
    };
    try {
      await server?.stop(); // the previous test's last process
      server = await startServerProcess(env);
      const tenant = await createTenant(server.url);
      const asAdmin = api(server.url, tenant.admin.token);
      // Connections to a keyed server with a stored shared key: changing the identity (url, authType)
      // must delete that credential in the same transaction that writes the new identity.
      const connections = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const created = await asAdmin.post('/v1/mcp-connections', {
            name: `Keyed ${i}`,
            url: keyed.url,
            authType: 'apikey',
            credentialMode: 'shared',
            access: { orgWide: true },
            apiKey,
          });
          assert.equal(created.status, 201, created.text);
          return created.body as { id: string; updatedAt: string };
        }),
      );
      let acked = 0;
      const edits = connections.map((connection, i) =>
        sleep(i * 15)
          .then(() =>
            asAdmin.put(`/v1/mcp-connections/${connection.id}`, {
              name: `Open ${i}`,
              url: open.url,
              authType: 'none',
              credentialMode: 'shared',
              access: { orgWide: true },
              expectedUpdatedAt: connection.updatedAt,
            }),
          )
          .then(
            (response) => {
              if (response.status === 200) acked++;
            },
            () => {},
          ),
      );
      while (acked < 4) await sleep(2);
      server.child.kill('SIGKILL');
      assert.equal(await server.exited, null);
      await Promise.allSettled(edits);
      const direct = new pg.Client({ connectionString: database.url });
      await direct.connect();
      try {
        const { rows } = await direct.query<{ id: string; url: string; auth_type: string; credentials: number }>(
          `SELECT c.id, c.url, c.auth_type, (SELECT count(*)::int FROM mcp_connection_credentials k WHERE k.connection_id = c.id) AS credentials
             FROM mcp_connections c WHERE c.id = ANY($1)`,
          [connections.map((connection) => connection.id)],
        );
        assert.equal(rows.length, connections.length);
        const torn = rows.filter((row) =>
          row.auth_type === 'none'
            ? row.credentials !== 0 || row.url !== open.url
            : row.credentials !== 1 || row.url !== keyed.url,
        );
        assert.deepEqual(torn, [], 'every connection is wholly before or wholly after its edit');
        const edited = rows.filter((row) => row.auth_type === 'none').length;
        assert.ok(edited >= acked, 'every acknowledged edit is there');
        console.log(
          `faults: 1 SIGKILL mid-edit survived; ${edited} of ${rows.length} identity changes committed whole (${acked} acknowledged), ${rows.length - edited} untouched, none torn`,
        );
      } finally {
        await direct.end();
      }
    } finally {
      await Promise.all([keyed.close(), open.close()]);
    }
  });
});
