// Runs the whole suite once per backend: a real PostgreSQL, then the embedded PGlite.
// Usage: npm test [-- <test files or globs>]   ORGPLANE_TEST_BACKEND=postgres|pglite runs one backend.
import { spawnSync } from 'node:child_process';

const files = process.argv.slice(2);
const targets = files.length > 0 ? files : ['test/**/*.test.ts'];
const backends = process.env.ORGPLANE_TEST_BACKEND ? [process.env.ORGPLANE_TEST_BACKEND] : ['postgres', 'pglite'];
const concurrency = process.env.TEST_CONCURRENCY ?? '4';

let failed = false;
for (const backend of backends) {
  console.log(`\n=== test suite on ${backend} ===`);
  const run = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', ...targets],
    { stdio: 'inherit', env: { ...process.env, ORGPLANE_TEST_BACKEND: backend } },
  );
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
