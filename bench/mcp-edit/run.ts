// Edits that keep the identity (name changes, so credentials stay and no probe runs) through the
// real HTTP route on PostgreSQL, against a bare route (GET /health) measured the same way.
// Each of C workers edits its own connection in a loop, carrying the updatedAt it got back as the
// next expectedUpdatedAt, so every edit is a real 200 (a 409 would be counted and reported).
//   node_modules/.bin/node bench/mcp-edit/run.ts [seconds per run, default 10] [workers, default 1,8]

process.env.ORGPLANE_TEST_BACKEND = 'postgres';
const { runClosedLoop } = await import('../support/closed-loop.ts');
const { startTestApp } = await import('../../test/support/app.ts');
const { createTenant } = await import('../../test/support/fixtures.ts');
const { startStreamableServer } = await import('../../test/support/mcp-servers.ts');

const seconds = Number(process.argv[2] ?? 10);
const workerCounts = (process.argv[3] ?? '1,8').split(',').map(Number);

const mcp = await startStreamableServer({ apiKey: 'bench-key' });
const app = await startTestApp({ allowedPrivateNetworks: ['127.0.0.0/8'], logLevel: 'warn' });
const tenant = await createTenant(app.url);
const headers = { authorization: `Bearer ${tenant.admin.token}`, 'content-type': 'application/json' };

async function createConnection(index: number) {
  const response = await fetch(`${app.url}/v1/mcp-connections`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: `bench ${index}`,
      url: mcp.url,
      authType: 'apikey',
      credentialMode: 'shared',
      apiKey: 'bench-key',
      access: { orgWide: true },
    }),
  });
  if (response.status !== 201) throw new Error(`create: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; url: string; updatedAt: string };
}

console.log(`node ${process.version}, PostgreSQL at 127.0.0.1:5432, ${seconds} s per run, ${new Date().toISOString()}`);
for (const workers of workerCounts) {
  await runClosedLoop('GET /health (bare route)', workers, seconds, async () => async () => {
    const response = await fetch(`${app.url}/health`);
    await response.arrayBuffer();
    return response.status;
  });
  await runClosedLoop('PUT /v1/mcp-connections/{id} (name only)', workers, seconds, async (index) => {
    let current = await createConnection(index);
    let n = 0;
    return async () => {
      const response = await fetch(`${app.url}/v1/mcp-connections/${current.id}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({
          expectedUpdatedAt: current.updatedAt,
          name: `bench ${index} edit ${n++}`,
          url: current.url,
          authType: 'apikey',
          credentialMode: 'shared',
          access: { orgWide: true },
        }),
      });
      const body = (await response.json()) as { updatedAt: string; identityChanged?: boolean };
      if (response.status === 200) {
        if (body.identityChanged) throw new Error('identity changed');
        current = { ...current, updatedAt: body.updatedAt };
      }
      return response.status;
    };
  });
}
const probeRequests = mcp.requests.length;
await app.close();
await mcp.close();
console.log(`MCP server requests during the whole run: ${probeRequests} (only the creates probe; name edits do not)`);
