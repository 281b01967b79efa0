// Instance administration at scale: 100,000 people and 10,000 organizations (each person a member of
// one), seeded by bulk SQL, then the /v1/admin lists and searches through real HTTP, one request at a
// time, p50 and p95 of each. Target: p95 <= 100 ms on both backends.
//   node_modules/.bin/node bench/admin/run.ts [postgres|pglite|all, default all] [requests per case, default 200]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const backend = process.argv[2] ?? 'all';
const requests = Number(process.argv[3] ?? 200);
if (backend === 'all') {
  // One process per backend: the test support picks its backend once, as it is imported.
  for (const each of ['postgres', 'pglite']) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), each, String(requests)], {
      stdio: 'inherit',
    });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
  process.exit(0);
}
process.env.ORGPLANE_TEST_BACKEND = backend;
const { startTestApp } = await import('../../test/support/app.ts');
const { signUp } = await import('../../test/support/fixtures.ts');

const PEOPLE = 100_000;
const ORGANIZATIONS = 10_000;

// A recent authentication is what the routes ask of a person; the run must not outlive it.
const app = await startTestApp({ logLevel: 'warn', reauthMaxAgeSeconds: 0 });
const seedStarted = performance.now();
// Ids shaped like the API's (prefix_ and 26 base32 characters); names and e-mails from a few word lists,
// so prefixes match from one row to thousands.
const first = ['ada', 'bea', 'carl', 'dora', 'emil', 'fay', 'gus', 'hana', 'ivan', 'jo', 'kai', 'lena', 'milo', 'nora'];
const last = ['smith', 'jones', 'garcia', 'müller', 'rossi', 'kim', 'nguyen', 'silva', 'novak', 'berg', 'ito'];
const words = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell', 'cyberdyne', 'wonka'];
const sqlArray = (values: string[]) => `ARRAY[${values.map((value) => `'${value}'`).join(',')}]`;
await app.db.query(
  `INSERT INTO organizations (id, name, plan, created_at)
   SELECT 'org_0bench' || lpad(i::text, 21, '0'),
          initcap((${sqlArray(words)})[1 + i % ${words.length}]) || ' ' || i,
          (ARRAY['free', 'team', 'enterprise'])[1 + i % 3],
          now() - make_interval(mins => i)
     FROM generate_series(1, ${ORGANIZATIONS}) AS i`,
);
await app.db.query(
  `INSERT INTO users (id, email, name, password_hash, created_at)
   SELECT 'usr_0bench' || lpad(i::text, 21, '0'),
          f || '.' || l || '.' || i || '@' || (${sqlArray(words)})[1 + i % ${words.length}] || '.example',
          initcap(f) || ' ' || initcap(l),
          NULL,
          now() - make_interval(mins => i)
     FROM generate_series(1, ${PEOPLE}) AS i,
          LATERAL (SELECT (${sqlArray(first)})[1 + i % ${first.length}] AS f,
                          (${sqlArray(last)})[1 + (i / ${first.length}) % ${last.length}] AS l) names`,
);
await app.db.query(
  `INSERT INTO members (id, organization_id, user_id, role)
   SELECT 'mem_0bench' || lpad(i::text, 21, '0'),
          'org_0bench' || lpad((1 + i % ${ORGANIZATIONS})::text, 21, '0'),
          'usr_0bench' || lpad(i::text, 21, '0'),
          CASE WHEN i <= ${ORGANIZATIONS} THEN 'owner' ELSE 'member' END
     FROM generate_series(1, ${PEOPLE}) AS i`,
);
// A person's memberships as the membership core keeps them beside the members (what their list counts).
await app.db.query(
  `INSERT INTO user_memberships (user_id, organization_id, member_id, role, status, member_since)
   SELECT user_id, organization_id, id, role, status, created_at FROM members WHERE id LIKE 'mem_0bench%'`,
);
// Half the people have a session, authenticated over the last 60 days.
await app.db.query(
  `INSERT INTO sessions (id, user_id, token_hash, expires_at, created_at, authenticated_at)
   SELECT 'ses_0bench' || lpad(i::text, 21, '0'), 'usr_0bench' || lpad(i::text, 21, '0'), 'bench-' || i,
          now() + interval '30 days', now() - make_interval(mins => (i * 7) % 86400), now() - make_interval(mins => (i * 7) % 86400)
     FROM generate_series(1, ${PEOPLE / 2}) AS i`,
);
await app.db.query('ANALYZE');
const seedSeconds = ((performance.now() - seedStarted) / 1000).toFixed(1);

const operator = await signUp(app.url, 'operator');
await app.db.query('UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);
const headers = { authorization: `Bearer ${operator.token}` };

async function get(path: string): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const response = await fetch(`${app.url}${path}`, { headers });
  const body = await response.json();
  return { status: response.status, body, ms: performance.now() - t0 };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

// A cursor from the middle of each list, for a deep page.
const middlePerson = `usr_0bench${String(PEOPLE / 2).padStart(21, '0')}`;
const middleOrganization = `org_0bench${String(ORGANIZATIONS / 2).padStart(21, '0')}`;
const cursorAfter = (id: string) => Buffer.from(JSON.stringify({ after: id })).toString('base64url');

// The e-mail of person 99,995, as the seed made it.
const oneEmail = `${first[99_995 % first.length]}.${last[Math.floor(99_995 / first.length) % last.length]}.99995`;
const cases: [string, string][] = [
  ['overview', '/v1/admin/overview'],
  ['people, first page (50)', '/v1/admin/people'],
  ['people, a page in the middle', `/v1/admin/people?cursor=${cursorAfter(middlePerson)}`],
  ['people, search "a" (1 in 14 names and e-mails)', '/v1/admin/people?search=a'],
  ['people, search "nora.ito" (e-mail prefix, ~650)', '/v1/admin/people?search=nora.ito'],
  ['people, search "Milo Be" (name prefix)', '/v1/admin/people?search=Milo%20Be'],
  [`people, search "${oneEmail}" (one)`, `/v1/admin/people?search=${encodeURIComponent(oneEmail)}`],
  ['people, search "zz" (none)', '/v1/admin/people?search=zz'],
  ['organizations, first page (50)', '/v1/admin/organizations'],
  ['organizations, a page in the middle', `/v1/admin/organizations?cursor=${cursorAfter(middleOrganization)}`],
  ['organizations, search "acme" (1 in 10)', '/v1/admin/organizations?search=acme'],
  ['organizations, search "Globex 777" (a few)', '/v1/admin/organizations?search=Globex%20777'],
  ['organizations, search by id', `/v1/admin/organizations?search=${middleOrganization}`],
];

console.log(
  `bench/admin on ${backend}: ${PEOPLE} people, ${ORGANIZATIONS} organizations, ${PEOPLE / 2} sessions (seeded in ${seedSeconds} s); ` +
    `${requests} requests per case, one at a time, after 20 warm-up; node ${process.version}, ${new Date().toISOString()}`,
);
console.log('| case | rows | p50 ms | p95 ms |\n|---|---|---|---|');
let worst = 0;
for (const [label, path] of cases) {
  for (let i = 0; i < 20; i++) await get(path);
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < requests; i++) {
    const answer = await get(path);
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    rows = (answer.body.people ?? answer.body.organizations ?? [answer.body]).length;
    times.push(answer.ms);
  }
  times.sort((a, b) => a - b);
  if (label !== 'overview') worst = Math.max(worst, percentile(times, 95));
  console.log(`| ${label} | ${rows} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} |`);
}
console.log(`worst p95 of the searches and pages: ${worst.toFixed(1)} ms (target <= 100 ms)`);
await app.close();
