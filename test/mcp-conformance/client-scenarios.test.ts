// The client scenarios of the official MCP conformance suite (@modelcontextprotocol/conformance, pinned
// in package.json), run against orgplane's own flow: the suite's CLI (`client --scenario <name>`, a
// few at a time: all at once starve a 2-core machine into the probe's timeouts) starts the scenario's
// servers and spawns ./client-command.ts with the server URL; that relays to the driver served here,
// which takes this file's orgplane (this run's backend) through the scenario (./orgplane-client.ts).
// The scenarios in scope are initialize, tools_call and every auth/*. Each must pass as the suite
// judges it (CLI exit 0: no failed check, no warning, the client done in time), except the few of
// `baseline` below, which must still fail with exactly the checks named (one that starts passing
// fails this test until it leaves the baseline, as the suite's own --expected-failures does).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useTenantApp } from '../support/harness.ts';
import { driveScenario, ScenarioFailed, type ScenarioRequest } from './orgplane-client.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
// The runner splits the command on spaces: both paths are absolute and this checkout has none.
const COMMAND = `${process.execPath} ${path.join(import.meta.dirname, 'client-command.ts')}`;
const CONCURRENCY = 3;

/** Scenarios orgplane does not pass yet, with the checks that fail and why. */
const baseline: Record<string, { checks: string[]; why: string }> = {
  'auth/basic-cimd': {
    checks: ['cimd-client-id-used'],
    why:
      'orgplane does use a client ID metadata document: it sends its own, served at <PUBLIC_URL>/oauth/client-metadata.json, as client_id (no registration). ' +
      "The check (a WARNING) passes only for the suite's fixed https://conformance-test.local/client-metadata.json, the URL the SDK's reference client hard-codes. " +
      'No PUBLIC_URL yields it (other host, and the path is /client-metadata.json), and claiming a document on a host orgplane does not serve is an identity an ' +
      "authorization server that dereferences it (as the draft requires; the suite's does not) would refuse",
  },
  'auth/cross-app-access-complete-flow': {
    checks: ['complete-flow-token-exchange', 'complete-flow-jwt-bearer'],
    why:
      "enterprise cross-app access (SEP-990) is not implemented. Its first step exchanges the member's ID token from the enterprise IdP for an ID-JAG (RFC 8693), " +
      'and orgplane holds no such token: the SSO module checks the ID token at sign-in and keeps only its claims (src/modules/sso/oidc.ts exchange). ' +
      "The scenario's ID token is minted by its own IdP, which serves only its discovery document and a token endpoint (no authorization endpoint, " +
      'and the jwks_uri it lists is not served), so no member can sign in through it and orgplane could not verify the token: only a test that ' +
      "planted the token in orgplane could pass, and that would not be orgplane's flow",
  },
};

const inScope = (name: string) => name === 'initialize' || name === 'tools_call' || name.startsWith('auth/');

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description: string;
  errorMessage?: string;
  details?: unknown;
}
interface ScenarioResult {
  checks: Check[];
  /** What orgplane did, as the driver saw it. */
  flow: { ok: boolean; steps: string[]; error?: string } | undefined;
}

const world = useTenantApp({ config: { allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] } });
const flows = new Map<string, ScenarioResult['flow']>();
let driver: Server | undefined;
let results = '';
let driverUrl = '';

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env, maxBuffer: 32 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

before(async () => {
  await world.ready;
  results = await mkdtemp(path.join(tmpdir(), 'orgplane-conformance-'));
  driver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', async () => {
      const input = JSON.parse(body) as ScenarioRequest;
      const steps: string[] = [];
      let outcome: NonNullable<ScenarioResult['flow']>;
      try {
        await driveScenario(world, input, steps);
        outcome = { ok: true, steps };
      } catch (error) {
        outcome = {
          ok: false,
          steps,
          error: error instanceof ScenarioFailed ? error.message : String((error as Error)?.stack ?? error),
        };
      }
      flows.set(input.scenario, outcome);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(outcome));
    });
  });
  await new Promise<void>((resolve) => driver!.listen(0, '127.0.0.1', resolve));
  driverUrl = `http://127.0.0.1:${(driver.address() as AddressInfo).port}/`;
});
after(async () => {
  await new Promise((resolve) => (driver ? driver.close(resolve) : resolve(undefined)));
  if (results) await rm(results, { recursive: true, force: true });
});

/** Runs one scenario; the suite saves it to <out>/<scenario>-<time>/ (auth/x: a folder auth holding x-<time>). */
async function run(scenario: string): Promise<ScenarioResult & { code: number; stderr: string }> {
  const out = path.join(results, scenario.replaceAll('/', '_'));
  const cli = await runCli(['client', '--command', COMMAND, '--scenario', scenario, '--timeout', '30000', '-o', out], {
    ...process.env,
    ORGPLANE_CONFORMANCE_DRIVER: driverUrl,
  });
  const file = (await readdir(out, { recursive: true }).catch(() => [] as string[])).find((name) =>
    name.endsWith('checks.json'),
  );
  const checks: Check[] = file ? JSON.parse(await readFile(path.join(out, file), 'utf8')) : [];
  return { checks, flow: flows.get(scenario), code: cli.code, stderr: cli.stderr };
}

function report(scenario: string, result: ScenarioResult): string {
  const count = (status: Check['status']) => result.checks.filter((check) => check.status === status).length;
  const bad = result.checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
  return [
    `[conformance] ${scenario}: ${bad.length === 0 && count('SUCCESS') > 0 ? 'PASS' : 'FAIL'} (${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('WARNING')} warnings)`,
    ...bad.map(
      (check) =>
        `  ${check.status} ${check.id}: ${check.description}${check.errorMessage ? ` (${check.errorMessage})` : ''}${check.details ? ` ${JSON.stringify(check.details)}` : ''}`,
    ),
    ...(bad.length > 0 || !result.flow?.ok
      ? [
          `  orgplane: ${result.flow ? (result.flow.ok ? 'completed' : `stopped: ${result.flow.error}`) : 'never asked'}`,
          ...(result.flow?.steps ?? []).map((s) => `    ${s}`),
        ]
      : []),
  ].join('\n');
}

// The suite's own list, read when the file loads: a scenario added to a newer suite is run too.
const listed = await new Promise<string>((resolve, reject) =>
  execFile(process.execPath, [CLI, 'list', '--client'], (error, stdout) => (error ? reject(error) : resolve(stdout))),
);
const scenarios = listed
  .split('\n')
  .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
  .filter((name): name is string => !!name);

// CONFORMANCE_SCENARIOS=<regex> runs only the matching ones (while working on one).
const only = process.env.CONFORMANCE_SCENARIOS ? new RegExp(process.env.CONFORMANCE_SCENARIOS) : null;

test('the suite lists initialize, tools_call and the auth scenarios (the 2025-03-26 back-compat ones among them)', () => {
  console.log(
    `[conformance] ${scenarios.length} client scenarios, ${scenarios.filter(inScope).length} in scope; not in scope: ${scenarios.filter((name) => !inScope(name)).join(', ')}`,
  );
  for (const name of [
    'initialize',
    'tools_call',
    'auth/2025-03-26-oauth-metadata-backcompat',
    'auth/2025-03-26-oauth-endpoint-fallback',
    ...Object.keys(baseline),
  ]) {
    assert.ok(scenarios.includes(name), `${name} is not in the suite: ${scenarios.join(', ')}`);
  }
  assert.ok(scenarios.filter(inScope).length >= 20, scenarios.join(', '));
});

describe('conformance client scenarios', { concurrency: CONCURRENCY }, () => {
  for (const scenario of scenarios.filter((name) => inScope(name) && (!only || only.test(name)))) {
    test(scenario, async () => {
      const result = await run(scenario);
      console.log(report(scenario, result));
      assert.ok(result.checks.length > 0, `${scenario}: the suite saved no checks\n${result.stderr.slice(-2000)}`);
      const failing = [
        ...new Set(
          result.checks
            .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
            .map((check) => check.id),
        ),
      ].sort();
      const known = baseline[scenario];
      if (!known) {
        assert.equal(
          result.code,
          0,
          `the suite failed ${scenario}\n${report(scenario, result)}\n${result.stderr.slice(-2000)}`,
        );
        assert.ok(
          result.checks.some((check) => check.status === 'SUCCESS'),
          `${scenario}: no check passed`,
        );
        return;
      }
      console.log(`  known failure: ${known.why}`);
      assert.notEqual(result.code, 0, `${scenario} passes now: take it out of the baseline`);
      assert.deepEqual(
        failing,
        [...known.checks].sort(),
        `${scenario} no longer fails as the baseline says: update it\n${report(scenario, result)}`,
      );
    });
  }
});
