// The messenger webhook (spec operation 8) under load: distinct update_ids, many concurrent
// connections, against a bare Fastify POST route measured in the same run, on PostgreSQL and PGlite.
// Every acknowledged update is claimed and queued in a committed transaction (group commit).
import { startBotPlatform } from '../../test/support/bot-platform.ts';
import { cpuPerRequest, type CpuPerRequest } from '../support/cpu.ts';
import { compareInRounds, json, load, spawnServer, startOrgplane } from '../support/servers.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const backends = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];

let nextUpdateId = 1;

function update(id: number): string {
  return JSON.stringify({
    update_id: id,
    message: {
      message_id: id,
      from: { id: 1000 + (id % 500), is_bot: false, first_name: 'Bench' },
      chat: { id: 1000 + (id % 500), type: 'private' },
      date: 1_700_000_000,
      text: `message ${id}`,
    },
  });
}

// A fresh update_id for every request: every one is a new claim, never a duplicate. With each run, the
// CPU that the server, PostgreSQL and the load generator (this process) spent per request: all three
// share the machine's cores, so what any of them spends is taken from the others.
const run = (serverPid: number, url: string, headers: Record<string, string>, duration: number) =>
  cpuPerRequest(serverPid, () =>
    load({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      connections,
      seconds: duration,
      nextBody: () => update(nextUpdateId++),
    }),
  );
const cpuColumns = ({ cpu }: { cpu: CpuPerRequest }) => `${cpu.serverUs} / ${cpu.postgresUs} / ${cpu.loadGeneratorUs}`;

const platform = await startBotPlatform();
const bare = await spawnServer(['bench/webhook/bare-webhook.ts'], {});
const rows: string[] = [];
try {
  for (const backend of backends) {
    const server = await startOrgplane(backend, {
      MESSENGER_API_ROOT: platform.url,
      ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
    });
    try {
      const email = `bench.${Date.now()}@example.test`;
      const { sessionToken } = await json(`${server.url}/v1/auth/sign-up`, 'POST', {
        email,
        password: 'bench password 1',
        name: 'Bench',
      });
      await json(`${server.url}/v1/orgs`, 'POST', { name: 'Bench Org' }, sessionToken);
      const bot = platform.addBot();
      const created = await json(
        `${server.url}/v1/messenger/connections`,
        'POST',
        { botToken: bot.token, deliveryUrl: 'http://127.0.0.1:9/unused' },
        sessionToken,
      );
      const connectionId: string = created.connection.id;
      const secret = platform.webhookOf(bot.token)!.secretToken!;
      const webhook = `${server.url}/v1/webhooks/messenger/${connectionId}`;
      const headers = { 'x-telegram-bot-api-secret-token': secret };

      // Warm-up, then rounds of the baseline and the route back to back, so both see the same machine
      // (which of the two goes first alternates).
      await run(server.child.pid!, webhook, headers, 2);
      const { rounds: measured, median } = await compareInRounds(
        rounds,
        () => run(bare.child.pid!, `${bare.url}/bare`, {}, seconds),
        () => run(server.child.pid!, webhook, headers, seconds),
      );
      for (const { route } of measured) {
        if (route.non2xx || route.errors)
          throw new Error(`webhook had ${route.non2xx} non-2xx and ${route.errors} errors`);
      }
      const row = ({ route, baseline, ratio }: (typeof measured)[number]) =>
        `${route.requestsPerSecond} | ${route.p50Ms} | ${route.p99Ms} | ${cpuColumns(route)} | ${baseline.requestsPerSecond} | ${baseline.p99Ms} | ${cpuColumns(baseline)} | ${ratio.toFixed(2)}`;
      rows.push(
        `| ${backend} | ${connections} | ${row(median)} | ${measured.map((round) => `${round.ratio.toFixed(2)} (p99 ${round.route.p99Ms})`).join(', ')} |`,
      );
    } finally {
      await server.stop();
    }
  }
} finally {
  await bare.stop();
  await platform.close();
}
console.log(
  `POST /v1/webhooks/messenger/{id} (distinct update_ids) vs a bare Fastify POST route: ${connections} connections, ${rounds} rounds of ${seconds}s each; the median round\n`,
);
console.log(
  "CPU us per request: the server / every postgres process / the load generator (PostgreSQL's share is only meaningful on a quiet machine; PGlite runs inside the server)\n",
);
console.log(
  '| backend | connections | webhook req/s | p50 ms | p99 ms | CPU us/req | bare req/s | bare p99 ms | bare CPU us/req | ratio | every round: ratio (p99 ms) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
