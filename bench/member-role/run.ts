// A member's role change (PATCH /v1/orgs/{organizationId}/members/{memberId}) through the real HTTP
// route on PostgreSQL, against a bare route (GET /health) measured the same way. Each of C workers
// flips its own member between admin and member in a loop, so every call is a real, committed 200
// (statuses are counted; anything else would show). Each change also writes its audit
// event (member.role_changed) in the change's own transaction: this bench is that cost's witness.
//   node_modules/.bin/node bench/member-role/run.ts [seconds per run, default 10] [workers, default 1,8]

process.env.ORGPLANE_TEST_BACKEND = 'postgres';
const { runClosedLoop } = await import('../support/closed-loop.ts');
const { startTestApp } = await import('../../test/support/app.ts');
const { addMember, createTenant, signUp } = await import('../../test/support/fixtures.ts');
type Tenant = Awaited<ReturnType<typeof createTenant>>;

const seconds = Number(process.argv[2] ?? 10);
const workerCounts = (process.argv[3] ?? '1,8').split(',').map(Number);

const app = await startTestApp({ logLevel: 'warn' });
const tenant = await createTenant(app.url);

console.log(`node ${process.version}, PostgreSQL at 127.0.0.1:5432, ${seconds} s per run, ${new Date().toISOString()}`);
let nextMember = 0;
/** A worker's step: flips its own new member of `org` between admin and member. */
async function roleFlipper(org: Tenant) {
  const person = await signUp(app.url, `bench-member-${nextMember++}`);
  await addMember(app.url, org.owner, org.orgId, person, 'member');
  const orgHeaders = { authorization: `Bearer ${org.owner.token}`, 'content-type': 'application/json' };
  let role: 'admin' | 'member' = 'member';
  return async () => {
    role = role === 'member' ? 'admin' : 'member';
    const response = await fetch(`${app.url}/v1/orgs/${org.orgId}/members/${person.memberId}`, {
      method: 'PATCH',
      headers: orgHeaders,
      body: JSON.stringify({ role }),
    });
    await response.arrayBuffer();
    return response.status;
  };
}
// Each organization's audit events form one hash chain, so its writes append one at a time; writers in
// different organizations do not wait for each other. Both shapes are measured.
// One at a time: a burst of sign-ups (password hashing) would exhaust the pool's wait before the run starts.
const others: Tenant[] = [];
for (let i = 0; i < Math.max(...workerCounts); i++) others.push(await createTenant(app.url));
for (const workers of workerCounts) {
  await runClosedLoop('GET /health (bare route)', workers, seconds, async () => async () => {
    const response = await fetch(`${app.url}/health`);
    await response.arrayBuffer();
    return response.status;
  });
  await runClosedLoop('PATCH .../members/{id} (role flip)', workers, seconds, () => roleFlipper(tenant));
  if (workers > 1)
    await runClosedLoop(`  the same, one org per worker`, workers, seconds, (index) => roleFlipper(others[index]!));
}
await app.close();
