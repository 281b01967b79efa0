// Runs the whole suite once per backend: a real PostgreSQL and the embedded PGlite.
// Usage: npm test [-- <test files or globs>]   ORGPLANE_TEST_BACKEND=postgres|pglite runs one backend.
//
// Each test file runs in its own `node --test` process (several at a time), with a hard time limit so
// that a hung file can never hang the run. A file that fails is run once more and the second result
// counts; every such retry is printed, so flakiness stays visible instead of silently passing.
//
// The slowest files start first (their last measured durations are in test/durations.json), so that a
// long file is not the one left running alone at the end; the run prints the slowest files it saw, and
// TEST_RECORD_DURATIONS=1 writes this run's durations back to that file.
//
// The Citus tier (test/citus) starts its own cluster and runs once, whatever the backends (labelled
// `citus`). Its replay files run the statements the tenant-routing check covered in the other files:
// those files leave them in this run's statement spool (test/support/statement-spool.ts), and the replay
// files start once the files they replay have run on the first backend.
//
// Before any test, the module boundaries of src/ are checked (.dependency-cruiser.mjs, the same check as
// `npm run lint:boundaries`): its summary is printed, and a violation fails the run. The tests still run,
// so one run shows both.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pgliteTemplateFiles } from '../src/db/pglite-template.ts';
import { SPOOL_VARIABLE, tenantRoutingFiles } from '../test/support/statement-spool.ts';

const patterns = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['test/**/*.test.ts'];
const files = [...new Set(patterns.flatMap((pattern) => globSync(pattern)))].sort();
const backends = process.env.ORGPLANE_TEST_BACKEND ? [process.env.ORGPLANE_TEST_BACKEND] : ['postgres', 'pglite'];
const citusTier = (file: string) => file.startsWith('test/citus/');
// The Citus tier's own processes use the first backend for what they run besides the cluster.
const citusBackend = backends[0]!;
const perBackend = files.filter((file) => !citusTier(file));
const once = files.filter(citusTier);
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 4);
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 8 * 60_000);
const durationsFile = 'test/durations.json';
/** Seconds per "<backend> <file>", from the run that last recorded them. */
const knownDurations: Record<string, number> = existsSync(durationsFile)
  ? JSON.parse(readFileSync(durationsFile, 'utf8'))
  : {};
// A file not measured yet may well be slow (a new browser test): it starts early rather than last.
const unmeasuredSeconds = 60;
const expectedSeconds = ({ file, backend }: Run) => knownDurations[`${backend} ${file}`] ?? unmeasuredSeconds;

// Every PGlite test database starts from the migrated template; after a migration was added or
// changed since `npm ci` it is made again here, once, rather than each database migrating itself.
if (!existsSync((await pgliteTemplateFiles()).migrated)) {
  spawnSync(process.execPath, ['scripts/build-pglite-template.ts'], { stdio: 'inherit' });
}

// The boundaries are a property of the code, not of a backend: checked once per run.
function checkBoundaries(): boolean {
  console.log('=== module boundaries (.dependency-cruiser.mjs) ===');
  const checker = 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs';
  if (!existsSync(checker)) {
    console.log(`=== module boundaries: ${checker} is missing (a devDependency: run npm ci): the run fails ===`);
    return false;
  }
  const check = spawnSync(
    process.execPath,
    [checker, 'src', 'console/src', 'shared', '--config', '.dependency-cruiser.mjs'],
    {
      stdio: 'inherit',
    },
  );
  const ok = check.status === 0;
  console.log(`=== module boundaries: ${ok ? 'no violation' : 'VIOLATED (see above): the run fails'} ===`);
  return ok;
}
const boundariesHold = checkBoundaries();

interface FileResult {
  file: string;
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
  ok: boolean;
  output: string;
}

const spool = mkdtempSync(path.join(tmpdir(), 'orgplane-statement-spool-'));
process.on('exit', () => rmSync(spool, { recursive: true, force: true }));

function runFile(file: string, backend: string): Promise<FileResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--test', '--test-timeout=180000', '--test-force-exit', file], {
      env: {
        ...process.env,
        ORGPLANE_TEST_BACKEND: backend === 'citus' ? citusBackend : backend,
        [SPOOL_VARIABLE]: spool,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[scripts/test.ts] ${file} exceeded ${fileTimeoutMs} ms and was killed\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const count = (label: string) => Number(new RegExp(`^ℹ ${label} (\\d+)`, 'm').exec(output)?.[1] ?? 0);
      const failed = count('fail') + count('cancelled');
      resolve({
        file,
        seconds: (Date.now() - started) / 1000,
        passed: count('pass'),
        failed,
        skipped: count('skipped'),
        todo: count('todo'),
        ok: code === 0 && failed === 0,
        output,
      });
    });
  });
}

interface Run {
  file: string;
  backend: string;
}

const runKey = ({ file, backend }: Run) => `${backend} ${file}`;

/** The runs a run waits for: a Citus replay file starts after the tenant-routing files have run on the first backend. */
const replayedRuns = once.length > 0 ? tenantRoutingFiles().map((file) => runKey({ file, backend: citusBackend })) : [];
function prerequisites(run: Run): string[] {
  return run.backend === 'citus' && path.basename(run.file).startsWith('replay-') ? replayedRuns : [];
}

// One pool for every (file, backend) pair: the second backend's files start while the first backend's
// last files still run, so the cores are not left half idle at the turn. A run whose prerequisites (in
// this pool) have not finished yet is passed over until they have.
async function runAll(runs: Run[]): Promise<(FileResult & Run)[]> {
  const results: (FileResult & Run)[] = [];
  const pending = [...runs];
  const inPool = new Set(runs.map(runKey));
  const finished = new Set<string>();
  let changed = Promise.withResolvers<void>();
  const ready = (run: Run) => prerequisites(run).every((key) => !inPool.has(key) || finished.has(key));
  await Promise.all(
    Array.from({ length: Math.min(concurrency, runs.length) }, async () => {
      while (pending.length > 0) {
        const index = pending.findIndex(ready);
        if (index < 0) {
          await changed.promise;
          continue;
        }
        const [run] = pending.splice(index, 1);
        const result = await runFile(run!.file, run!.backend);
        process.stdout.write(`\n--- ${run!.file} on ${run!.backend} ---\n${result.output}`);
        results.push({ ...result, backend: run!.backend });
        finished.add(runKey(run!));
        changed.resolve();
        changed = Promise.withResolvers<void>();
      }
    }),
  );
  return results;
}

let passed = 0;
let failed = 0;
let skipped = 0;
const started = Date.now();
console.log(
  `\n=== test suite on ${backends.join(' and ')}: ${perBackend.length} files each${once.length > 0 ? `, and the Citus tier once (${once.length} files)` : ''} ===`,
);
const runs = [
  ...backends.flatMap((backend) => perBackend.map((file) => ({ file, backend }))),
  ...once.map((file) => ({ file, backend: 'citus' })),
];
const first = await runAll(runs.sort((a, b) => expectedSeconds(b) - expectedSeconds(a)));
const retried = first.filter((result) => !result.ok);
const second = retried.length > 0 ? await runAll(retried.map(({ file, backend }) => ({ file, backend }))) : [];
for (const result of retried)
  console.log(`[scripts/test.ts] RETRIED after a failure on ${result.backend}: ${result.file}`);
const final = new Map(first.map((result) => [`${result.backend} ${result.file}`, result]));
for (const result of second) final.set(`${result.backend} ${result.file}`, result);
for (const result of final.values()) {
  passed += result.passed;
  failed += result.ok ? 0 : Math.max(1, result.failed);
  skipped += result.skipped;
}
for (const backend of once.length > 0 ? [...backends, 'citus'] : backends) {
  const failing = [...final.values()]
    .filter((result) => result.backend === backend && !result.ok)
    .map((result) => result.file);
  console.log(`=== ${backend}: ${failing.length === 0 ? 'all files passed' : `failing: ${failing.join(', ')}`} ===`);
}
const slowest = [...first].sort((a, b) => b.seconds - a.seconds).slice(0, 15);
console.log('\nslowest files (first attempt):');
for (const result of slowest)
  console.log(`  ${result.seconds.toFixed(1).padStart(6)} s  ${result.backend} ${result.file}`);
if (process.env.TEST_RECORD_DURATIONS === '1') {
  const recorded = { ...knownDurations };
  for (const result of first) recorded[`${result.backend} ${result.file}`] = Math.round(result.seconds * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(recorded).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(durationsFile, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`durations written to ${durationsFile}`);
}
console.log(`\nsuite finished in ${Math.round((Date.now() - started) / 1000)} s on ${backends.join(' and ')}`);
if (!boundariesHold) console.log('module boundaries violated: see the check printed before the tests');
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || !boundariesHold ? 1 : 0);
