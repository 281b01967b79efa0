// GET /v1/org (spec operation 7) against a bare Fastify route, measured in the same run, on both backends.
import { json, load, startBareFastify, startOrgplane } from '../support/servers.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const backends = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];

const bare = await startBareFastify();
const rows: string[] = [];
try {
  for (const backend of backends) {
    const server = await startOrgplane(backend);
    try {
      const email = `bench.${Date.now()}@example.test`;
      const { sessionToken } = await json(`${server.url}/v1/auth/sign-up`, 'POST', {
        email,
        password: 'bench password 1',
        name: 'Bench',
      });
      const { organization } = await json(`${server.url}/v1/orgs`, 'POST', { name: 'Bench Org' }, sessionToken);
      const { team } = await json(
        `${server.url}/v1/orgs/${organization.id}/teams`,
        'POST',
        { name: 'Bench Team' },
        sessionToken,
      );
      const me = await json(`${server.url}/v1/org`, 'GET', undefined, sessionToken);
      await json(
        `${server.url}/v1/orgs/${organization.id}/teams/${team.id}/members`,
        'POST',
        { memberId: me.currentMember.id },
        sessionToken,
      );

      // Warm-up, then the baseline and the route back to back so both see the same machine.
      await load({
        url: `${server.url}/v1/org`,
        headers: { authorization: `Bearer ${sessionToken}` },
        connections,
        seconds: 2,
      });
      const baseline = await load({ url: `${bare.url}/bare`, connections, seconds });
      const route = await load({
        url: `${server.url}/v1/org`,
        headers: { authorization: `Bearer ${sessionToken}` },
        connections,
        seconds,
      });
      if (route.non2xx || route.errors)
        throw new Error(`GET /v1/org had ${route.non2xx} non-2xx and ${route.errors} errors`);
      rows.push(
        `| ${backend} | ${route.requestsPerSecond} | ${route.p50Ms} | ${route.p99Ms} | ${baseline.requestsPerSecond} | ${baseline.p99Ms} | ${(route.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)} |`,
      );
    } finally {
      await server.stop();
    }
  }
} finally {
  await bare.stop();
}
console.log(`GET /v1/org vs bare Fastify route: ${connections} connections, ${seconds}s each\n`);
console.log('| backend | /v1/org req/s | p50 ms | p99 ms | bare req/s | bare p99 ms | ratio |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
