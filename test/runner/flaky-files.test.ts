// scripts/test.ts on a fixture file that fails once and then passes: the retry shows the failure was
// intermittent, but only the quarantine (a listed file, on a listed backend, with a reason) keeps such a
// file from failing the run. The checks of the code are skipped here: they are not what these runs test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const fixture = 'test/runner/fixtures/flaky.fixture.ts';
const scratch = mkdtempSync(path.join(tmpdir(), 'orgplane-runner-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface RunnerRun {
  code: number | null;
  output: string;
  /** How many times the fixture ran (it appends a line to its marker each time). */
  fixtureRuns: number;
}

let runs = 0;
async function runRunner(mode: 'once' | 'always' | 'never', quarantine: unknown): Promise<RunnerRun> {
  runs += 1;
  const marker = path.join(scratch, `marker-${runs}`);
  const quarantineFile = path.join(scratch, `quarantine-${runs}.json`);
  writeFileSync(quarantineFile, JSON.stringify(quarantine));
  const { TEST_RECORD_DURATIONS: _record, ...env } = process.env;
  const child = spawn(process.execPath, ['scripts/test.ts', fixture], {
    cwd: root,
    env: {
      ...env,
      ORGPLANE_TEST_BACKEND: 'pglite',
      TEST_CONCURRENCY: '1',
      TEST_SKIP_CHECKS: '1',
      TEST_QUARANTINE_FILE: quarantineFile,
      RUNNER_FIXTURE_MODE: mode,
      RUNNER_FIXTURE_MARKER: marker,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let fixtureRuns = 0;
  try {
    fixtureRuns = readFileSync(marker, 'utf8').split('\n').filter(Boolean).length;
  } catch {}
  return { code, output, fixtureRuns };
}

const entry = (backends: string[], reason = 'known slow-machine timing in the fixture') => ({
  file: fixture,
  backends,
  reason,
});

test('a file that passes the first time passes the run, and runs once', async () => {
  const run = await runRunner('never', []);
  assert.equal(run.code, 0, run.output);
  assert.equal(run.fixtureRuns, 1);
  assert.match(run.output, /^tests: 1 passed, 0 failed, 0 skipped$/m);
});

test('a file that fails and then passes on the retry fails the run, and the output says it was flaky', async () => {
  const run = await runRunner('once', []);
  assert.equal(run.code, 1, run.output);
  assert.equal(run.fixtureRuns, 2, 'the retry still runs, to show the failure was intermittent');
  assert.match(run.output, /flaky\.fixture\.ts on pglite: FLAKY: failed, then passed on the retry/);
  assert.match(run.output, /^=== pglite: flaky: test\/runner\/fixtures\/flaky\.fixture\.ts ===$/m);
  assert.match(run.output, /^tests: 0 passed, 1 failed, 0 skipped$/m);
  // The (empty) quarantine is printed at the start and at the end.
  assert.equal(run.output.match(/=== quarantine \(.*\): empty: every flaky file fails the run ===/g)?.length, 2);
});

test('a quarantined flaky file passes the run, and the quarantine and its reason are printed at start and end', async () => {
  const run = await runRunner('once', [entry(['pglite'])]);
  assert.equal(run.code, 0, run.output);
  assert.equal(run.fixtureRuns, 2);
  assert.match(run.output, /quarantined \(known slow-machine timing in the fixture\)/);
  assert.match(run.output, /^tests: 1 passed, 0 failed, 0 skipped$/m);
  const listed = `  ${fixture} on pglite: known slow-machine timing in the fixture`;
  assert.equal(run.output.split('\n').filter((line) => line === listed).length, 2, run.output);
});

test('the quarantine forgives only the backends it lists', async () => {
  const run = await runRunner('once', [entry(['postgres'])]);
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, /FLAKY/);
});

test('a quarantined file that fails twice still fails the run', async () => {
  const run = await runRunner('always', [entry(['pglite'])]);
  assert.equal(run.code, 1, run.output);
  assert.equal(run.fixtureRuns, 2);
  assert.match(run.output, /flaky\.fixture\.ts on pglite: FAILED twice/);
  assert.match(run.output, /^=== pglite: failing: test\/runner\/fixtures\/flaky\.fixture\.ts ===$/m);
});

test('a quarantine entry without a reason is refused before any test runs', async () => {
  const run = await runRunner('once', [entry(['pglite'], ' ')]);
  assert.equal(run.code, 1, run.output);
  assert.equal(run.fixtureRuns, 0);
  assert.match(run.output, /is invalid: entry 0: no reason given/);
});
