// /metrics exports what an operator alerts on: queued and dead messenger deliveries, the audit streams'
// lag, MCP credentials by health, the database pool, the workers' rounds and failures. Read from the
// Prometheus text as prom-client writes it; the state reads are instance-wide on purpose (declared
// fan-outs), and no label names a tenant.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPollLoop } from '../../src/platform/poll-loop.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { useAppWithCuttableDatabase } from '../support/cuttable-database.ts';
import { connectBot, eventually, startMessengerEnv, type MessengerEnv } from '../messenger/support.ts';

const tenantRouting = checkTenantRouting();

/** The samples of the text format: `name{labels} value` lines, by `name{labels}`. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

describe('operator metrics', () => {
  let env: MessengerEnv;
  const scrape = async () => {
    const response = await fetch(new URL('/metrics', env.app.url));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    return { text, samples: parseMetrics(text) };
  };

  before(async () => {
    // No workers: what is queued stays queued, and the stream stays behind.
    env = await startMessengerEnv({ runWorkers: false });
  });
  after(async () => {
    await env?.close();
  });

  test('an empty instance exports every metric at zero, with its HELP and TYPE', async () => {
    const { text, samples } = await scrape();
    for (const [name, type] of [
      ['orgplane_messenger_deliveries_queued', 'gauge'],
      ['orgplane_messenger_oldest_due_delivery_age_seconds', 'gauge'],
      ['orgplane_messenger_deliveries_dead', 'gauge'],
      ['orgplane_audit_stream_lag_seconds', 'gauge'],
      ['orgplane_audit_streams_dead', 'gauge'],
      ['orgplane_mcp_credentials', 'gauge'],
      ['orgplane_db_pool_connections', 'gauge'],
      ['orgplane_db_pool_waiting_requests', 'gauge'],
      ['orgplane_background_job_runs_total', 'counter'],
      ['orgplane_background_job_failures_total', 'counter'],
    ]) {
      assert.ok(text.includes(`# TYPE ${name} ${type}\n`), name);
      assert.ok(text.includes(`# HELP ${name} `), name);
    }
    assert.equal(samples.get('orgplane_messenger_deliveries_queued'), 0);
    assert.equal(samples.get('orgplane_messenger_oldest_due_delivery_age_seconds'), 0);
    assert.equal(samples.get('orgplane_audit_stream_lag_seconds'), 0);
    for (const health of ['ready', 'unknown', 'reconnect_required'])
      assert.equal(samples.get(`orgplane_mcp_credentials{health="${health}"}`), 0, health);
    assert.ok((samples.get('orgplane_db_pool_connections{state="idle"}') ?? -1) >= 0);
    assert.ok((samples.get('orgplane_db_pool_connections{state="in_use"}') ?? -1) >= 0);
    assert.equal(samples.get('orgplane_db_pool_waiting_requests'), 0);
  });

  test('a queued delivery is counted, with the age of the oldest due one', async () => {
    const bot = await connectBot(env);
    const update = env.platform.messageUpdate(bot.bot.token, { chatId: 77, text: 'queued' });
    assert.equal((await env.platform.deliver(bot.bot.token, update)).status, 200);
    const { samples } = await eventually(
      async () => {
        const scraped = await scrape();
        return scraped.samples.get('orgplane_messenger_deliveries_queued') === 1 && scraped;
      },
      { what: 'the queued delivery in /metrics' },
    );
    assert.ok((samples.get('orgplane_messenger_oldest_due_delivery_age_seconds') ?? -1) >= 0);
    // A dead-lettered one is counted apart (its attempts are over; the queue no longer holds it).
    await env.app.db.query(
      "UPDATE messenger_updates SET status = 'dead' WHERE organization_id = $1 AND connection_id = $2",
      [env.tenant.orgId, bot.id],
    );
    const after = (await scrape()).samples;
    assert.equal(after.get('orgplane_messenger_deliveries_queued'), 0);
    assert.equal(after.get('orgplane_messenger_deliveries_dead'), 1);
  });

  test("an audit stream behind its organization's events shows a lag; a dead one is counted", async () => {
    const { owner } = env.tenant;
    const put = await api(env.app.url, owner.token).put(`/v1/orgs/${env.tenant.orgId}/audit-stream`, {
      url: 'https://siem.example.test/intake',
      enabled: true,
    });
    assert.equal(put.status, 200, put.text);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lag = (await scrape()).samples.get('orgplane_audit_stream_lag_seconds') ?? 0;
    assert.ok(lag > 0, `lag ${lag}`);
    await env.app.db.query('UPDATE audit_streams SET dead_at = now() WHERE organization_id = $1', [env.tenant.orgId]);
    const samples = (await scrape()).samples;
    assert.equal(samples.get('orgplane_audit_streams_dead'), 1);
    // A dead stream is not lagging: it is dead-lettered (its own alert).
    assert.equal(samples.get('orgplane_audit_stream_lag_seconds'), 0);
  });

  test("a worker's rounds and failed rounds are counted by its name", async () => {
    let rounds = 0;
    const loop = startPollLoop({
      name: 'test-failing-worker',
      intervalMs: 5,
      async round() {
        rounds += 1;
        if (rounds % 2 === 0) throw new Error('this round fails');
        return false;
      },
    });
    while (rounds < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    await loop.stop();
    const samples = (await scrape()).samples;
    assert.equal(samples.get('orgplane_background_job_runs_total{worker="test-failing-worker"}'), rounds);
    assert.equal(
      samples.get('orgplane_background_job_failures_total{worker="test-failing-worker"}'),
      Math.floor(rounds / 2),
    );
  });

  test('no tenant appears in /metrics, and its reads are the declared instance-wide ones', async () => {
    const { text } = await scrape();
    const { tenant } = env;
    for (const secret of [tenant.orgId, tenant.otherOrgId, tenant.owner.email, 'siem.example.test'])
      assert.ok(!text.includes(secret), `${secret} in /metrics`);
    // Anonymous, and no credential is asked for or changes the answer.
    assert.equal((await api(env.app.url, 'not-a-token').get('/metrics')).status, 200);
    await tenantRouting.assertStatementsStayOnOneTenant(env.app.db, 5);
  });
});

describe("a real worker's failed rounds while the database is away", {
  skip: testBackend !== 'postgres' && 'the embedded database cannot become unreachable',
}, () => {
  const cuttable = useAppWithCuttableDatabase({ runWorkers: true });

  test('audit-streams rounds fail while it is cut, and are counted so once it is back', async () => {
    const failures = 'orgplane_background_job_failures_total{worker="audit-streams"}';
    const runs = 'orgplane_background_job_runs_total{worker="audit-streams"}';
    const read = async () => parseMetrics(await (await fetch(new URL('/metrics', cuttable.app.url))).text());
    const before = await read();
    await cuttable.proxy.cut();
    // Each idle round waits the poll interval (AUDIT_STREAM_POLL_SECONDS, 1 s by default): two of them fail.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await cuttable.proxy.restore();
    const after = await eventually(
      async () => {
        const samples = await read();
        return (samples.get(failures) ?? 0) > (before.get(failures) ?? 0) && samples;
      },
      { what: 'a failed audit-streams round in /metrics' },
    );
    assert.ok((after.get(runs) ?? 0) >= (after.get(failures) ?? 0));
  });
});
