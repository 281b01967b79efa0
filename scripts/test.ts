// Runs the whole suite once per backend: a real PostgreSQL and the embedded PGlite.
// Usage: npm test [-- <test files or globs>]   ORGPLANE_TEST_BACKEND=postgres|pglite runs one backend.
//
// Each test file runs in its own `node --test` process (several at a time), with a hard time limit so
// that a hung file can never hang the run. A file that fails is run once more, only to tell an
// intermittent failure from a steady one: a file that fails and then passes is FLAKY, and a flaky file
// fails the run like any failure (in a suite of race tests an intermittent failure is as likely a real
// race as a slow machine). The one exception is a file listed, with its backends and a reason, in
// test/quarantine.json (TEST_QUARANTINE_FILE names another): the run prints that list at its start and
// its end, and a listed file that fails and then passes on a listed backend does not fail the run. A
// listed file that fails twice still does.
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
// Before any test, the checks of the code as a whole run (`checks` below: the module boundaries of src/,
// console/src/ and shared/, Biome's format and lint, knip's unused code; `npm run lint` runs the same): each prints its output and a
// summary line, and a failing check fails the run. The tests still run, so one run shows both. TEST_SKIP_CHECKS=1 skips them, saying
// so (the test of this runner uses it, and it alone).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pgliteTemplateFiles } from '../src/db/pglite-template.ts';
import { ensurePostgresTemplate } from '../test/support/postgres-template.ts';
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

/**
 * A file whose flakiness is known and owned: it may fail and then pass on these backends without failing
 * the run. An entry says why; the list starts empty and an entry is meant to leave it soon.
 */
interface QuarantineEntry {
  file: string;
  backends: string[];
  reason: string;
}
const quarantineFile = process.env.TEST_QUARANTINE_FILE ?? 'test/quarantine.json';
function readQuarantine(): QuarantineEntry[] {
  const entries: unknown = existsSync(quarantineFile) ? JSON.parse(readFileSync(quarantineFile, 'utf8')) : [];
  const problems: string[] = [];
  if (!Array.isArray(entries)) problems.push('it is not a JSON array');
  for (const [index, entry] of (Array.isArray(entries) ? entries : []).entries()) {
    const { file, backends: on, reason } = (entry ?? {}) as Partial<QuarantineEntry>;
    if (typeof file !== 'string' || !existsSync(file)) problems.push(`entry ${index}: no such test file: ${file}`);
    if (!Array.isArray(on) || on.length === 0 || !on.every((b) => ['postgres', 'pglite', 'citus'].includes(b)))
      problems.push(`entry ${index}: backends must list postgres, pglite or citus`);
    if (typeof reason !== 'string' || reason.trim() === '') problems.push(`entry ${index}: no reason given`);
  }
  if (problems.length > 0) {
    // A quarantine no one can read would forgive nothing or the wrong file: refuse to run instead.
    console.log(`=== ${quarantineFile} is invalid: ${problems.join('; ')} ===`);
    process.exit(1);
  }
  return entries as QuarantineEntry[];
}
const quarantine = readQuarantine();
const quarantined = ({ file, backend }: Run) =>
  quarantine.find((entry) => entry.file === file && entry.backends.includes(backend));
function printQuarantine() {
  console.log(
    quarantine.length === 0
      ? `=== quarantine (${quarantineFile}): empty: every flaky file fails the run ===`
      : `=== quarantine (${quarantineFile}): ${quarantine.length} file(s) may fail once and pass on the retry ===`,
  );
  for (const entry of quarantine) console.log(`  ${entry.file} on ${entry.backends.join(', ')}: ${entry.reason}`);
}

// Every PostgreSQL test app's database is a clone of the migrated template (test/support/postgres-template.ts):
// made here, once, before the files start, rather than by the first few files at once.
if (backends.includes('postgres') || (once.length > 0 && citusBackend === 'postgres')) {
  const started = Date.now();
  try {
    const template = await ensurePostgresTemplate();
    console.log(`=== PostgreSQL template database ${template} ready (${Date.now() - started} ms) ===`);
  } catch (error) {
    // The files that need PostgreSQL fail on their own, each saying why.
    console.log(`=== PostgreSQL template database not made: ${error instanceof Error ? error.message : error} ===`);
  }
}

// Every PGlite test database starts from the migrated template; after a migration was added or
// changed since `npm ci` it is made again here, once, rather than each database migrating itself.
if (!existsSync((await pgliteTemplateFiles()).migrated)) {
  spawnSync(process.execPath, ['scripts/build-pglite-template.ts'], { stdio: 'inherit' });
}

/**
 * A check of the code as a whole, not of a backend: run once per run, before the tests. `needs` names a
 * file the check needs (a devDependency): without it the check fails, saying so, rather than pass unseen.
 */
interface Check {
  name: string;
  program: string;
  args: string[];
  needs: string;
}
const checks: Check[] = [
  {
    name: 'module boundaries (.dependency-cruiser.mjs)',
    program: process.execPath,
    args: [
      'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs',
      'src',
      'console/src',
      'shared',
      '--config',
      '.dependency-cruiser.mjs',
    ],
    needs: 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs',
  },
  {
    // Formatting and lint (biome.json); a warning is a finding too.
    name: 'format and lint (Biome)',
    program: 'node_modules/@biomejs/biome/bin/biome',
    args: ['check', '--error-on-warnings', '--max-diagnostics=50', '.'],
    needs: 'node_modules/@biomejs/biome/bin/biome',
  },
  {
    // Unused files, exports and dependencies (knip.json).
    name: 'unused code (knip)',
    program: process.execPath,
    args: ['node_modules/knip/bin/knip.js'],
    needs: 'node_modules/knip/bin/knip.js',
  },
];

/** The names of the checks that failed. */
function runChecks(): string[] {
  if (process.env.TEST_SKIP_CHECKS === '1') {
    console.log(`=== checks SKIPPED (TEST_SKIP_CHECKS=1): ${checks.map((check) => check.name).join(', ')} ===`);
    return [];
  }
  const failedChecks: string[] = [];
  for (const check of checks) {
    console.log(`=== ${check.name} ===`);
    if (!existsSync(check.needs)) {
      console.log(`=== ${check.name}: ${check.needs} is missing (a devDependency: run npm ci): the run fails ===`);
      failedChecks.push(check.name);
      continue;
    }
    const ok = spawnSync(check.program, check.args, { stdio: 'inherit' }).status === 0;
    console.log(`=== ${check.name}: ${ok ? 'passed' : 'FAILED (see above): the run fails'} ===`);
    if (!ok) failedChecks.push(check.name);
  }
  return failedChecks;
}
const failedChecks = runChecks();

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

// A runner started under `node --test` (its own test does that) must not hand that context on: node:test
// in a child that has it skips running the file.
const { NODE_TEST_CONTEXT: _context, ...inherited } = process.env;
// Each file's process compiles (and type-strips) the same modules: cached, as `orgplane start` caches
// them (src/main.ts), in the same folder.
const childEnvironment = {
  NODE_COMPILE_CACHE: path.join(tmpdir(), 'node-compile-cache'),
  ...inherited,
};

function runFile(file: string, backend: string): Promise<FileResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--test', '--test-timeout=180000', '--test-force-exit', file], {
      env: {
        ...childEnvironment,
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
        // A file whose run printed no summary ran no test (node:test skipped it, or it died first).
        ok: code === 0 && failed === 0 && /^ℹ tests \d+/m.test(output),
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

const started = Date.now();
console.log(
  `\n=== test suite on ${backends.join(' and ')}: ${perBackend.length} files each${once.length > 0 ? `, and the Citus tier once (${once.length} files)` : ''} ===`,
);
printQuarantine();
const runs = [
  ...backends.flatMap((backend) => perBackend.map((file) => ({ file, backend }))),
  ...once.map((file) => ({ file, backend: 'citus' })),
];
const first = await runAll(runs.sort((a, b) => expectedSeconds(b) - expectedSeconds(a)));
const failedFirst = first.filter((result) => !result.ok);
const second = new Map(
  (failedFirst.length > 0 ? await runAll(failedFirst.map(({ file, backend }) => ({ file, backend }))) : []).map(
    (result) => [runKey(result), result],
  ),
);

/** What a file came to on one backend: the attempt that counts, and why. */
interface Outcome {
  result: FileResult & Run;
  verdict: 'passed' | 'failed' | 'flaky' | 'quarantined';
  /** The quarantine entry that forgave it. */
  entry?: QuarantineEntry;
}
const outcomes: Outcome[] = first.map((result) => {
  if (result.ok) return { result, verdict: 'passed' };
  const retry = second.get(runKey(result));
  // Failed twice: the retry's output is the second look at the same failure.
  if (!retry?.ok) return { result: retry ?? result, verdict: 'failed' };
  // A flaky file counts as its failing attempt, unless quarantined on this backend.
  const entry = quarantined(result);
  return entry ? { result: retry, verdict: 'quarantined', entry } : { result, verdict: 'flaky' };
});
for (const { result, verdict, entry } of outcomes) {
  if (verdict === 'passed') continue;
  const what = {
    failed: 'FAILED twice (a steady failure)',
    flaky: 'FLAKY: failed, then passed on the retry; not in the quarantine, so the run fails',
    quarantined: `failed, then passed on the retry; quarantined (${entry?.reason})`,
  }[verdict];
  console.log(`[scripts/test.ts] ${result.file} on ${result.backend}: ${what}`);
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const { result, verdict } of outcomes) {
  passed += result.passed;
  failed += verdict === 'passed' || verdict === 'quarantined' ? 0 : Math.max(1, result.failed);
  skipped += result.skipped;
}
for (const backend of once.length > 0 ? [...backends, 'citus'] : backends) {
  const mine = outcomes.filter(({ result }) => result.backend === backend);
  const listed = (verdict: Outcome['verdict']) =>
    mine.filter((outcome) => outcome.verdict === verdict).map(({ result }) => result.file);
  const failing = listed('failed');
  const flaky = listed('flaky');
  const forgiven = listed('quarantined');
  console.log(
    `=== ${backend}: ${failing.length + flaky.length === 0 ? 'all files passed' : ''}${failing.length > 0 ? `failing: ${failing.join(', ')}` : ''}${failing.length > 0 && flaky.length > 0 ? '; ' : ''}${flaky.length > 0 ? `flaky: ${flaky.join(', ')}` : ''}${forgiven.length > 0 ? ` (flaky but quarantined: ${forgiven.join(', ')})` : ''} ===`,
  );
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
printQuarantine();
if (failedChecks.length > 0) console.log(`checks failed: ${failedChecks.join(', ')} (see the output before the tests)`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || failedChecks.length > 0 ? 1 : 0);
