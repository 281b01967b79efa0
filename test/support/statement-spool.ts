// The statements the tenant-routing check covers, kept for test/citus to replay on a Citus cluster.
// A file whose flows that check covers (it calls `checkTenantRouting()`) writes the statements it checked
// to the spool folder named by ORGPLANE_STATEMENT_SPOOL, one JSON file per test file and backend.
// `npm test` (scripts/test.ts) gives the whole run one spool and starts the replay files after the files
// they replay, so each flow runs once; a replay file run on its own runs its files itself.
import { spawn } from 'node:child_process';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CapturedStatement } from './statement-capture.ts';

export const SPOOL_VARIABLE = 'ORGPLANE_STATEMENT_SPOOL';

const root = path.resolve(import.meta.dirname, '../..');

/** The test files that run the tenant-routing check on their flows (relative to the project root, sorted). */
export function tenantRoutingFiles(): string[] {
  return globSync('test/**/*.test.ts', { cwd: root })
    .filter(
      (file) =>
        !file.startsWith('test/citus/') && /\bcheckTenantRouting\(\)/.test(readFileSync(path.join(root, file), 'utf8')),
    )
    .sort();
}

/**
 * The replay files of test/citus and the tenant-routing files each replays: every such file belongs to
 * exactly one group (the last takes what the others do not), so a new one is replayed without a change here.
 */
export const REPLAY_GROUPS: readonly { name: string; covers(file: string): boolean }[] = [
  { name: 'matrix', covers: (file) => file.startsWith('test/reliability/') },
  {
    name: 'identity',
    covers: (file) =>
      ['test/identity/', 'test/install-links/', 'test/desktop-sign-in/'].some((folder) => file.startsWith(folder)),
  },
  { name: 'integrations', covers: () => true },
];

export function replayGroupOf(file: string): string {
  return REPLAY_GROUPS.find((group) => group.covers(file))!.name;
}

const spoolFile = (spool: string, backend: string, file: string) =>
  path.join(spool, backend, `${file.replaceAll('/', '__')}.json`);

// Parameters as JSON: bytes and timestamps keep their type, the rest is what node-postgres sent.
function encode(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { $bytes: value.toString('base64') };
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(encode);
  return value;
}

function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (value && typeof value === 'object' && typeof (value as { $bytes?: unknown }).$bytes === 'string')
    return Buffer.from((value as { $bytes: string }).$bytes, 'base64');
  return value;
}

/** Called by the tenant-routing check: keeps this test file's checked statements when a spool is set. */
export async function spoolStatements(statements: CapturedStatement[]): Promise<void> {
  const spool = process.env[SPOOL_VARIABLE];
  const entry = process.argv[1];
  if (!spool || !entry) return;
  const file = path.relative(root, path.resolve(entry));
  const backend = process.env.ORGPLANE_TEST_BACKEND === 'postgres' ? 'postgres' : 'pglite';
  const target = spoolFile(spool, backend, file);
  await mkdir(path.dirname(target), { recursive: true });
  const encoded = statements.map((statement) => ({ text: statement.text, values: statement.values.map(encode) }));
  await writeFile(target, JSON.stringify(encoded));
}

/** The statements a file left in the spool (from either backend's run), or undefined. */
export async function spooledStatements(spool: string, file: string): Promise<CapturedStatement[] | undefined> {
  for (const backend of ['postgres', 'pglite']) {
    const found = spoolFile(spool, backend, file);
    if (!existsSync(found)) continue;
    const stored = JSON.parse(await readFile(found, 'utf8')) as { text: string; values: unknown[] }[];
    return stored.map((statement) => ({ text: statement.text, values: statement.values.map(decode) }));
  }
  return undefined;
}

/**
 * Runs test files (`node --test`, this run's backend, one after another) so that they fill `spool`;
 * resolves with each file's output, for the message when one left nothing.
 */
export async function fillSpool(spool: string, files: string[]): Promise<Map<string, string>> {
  const outputs = new Map<string, string>();
  for (const file of files) {
    const output = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ['--test', '--test-timeout=180000', '--test-force-exit', file], {
        cwd: root,
        // Without the parent's NODE_TEST_CONTEXT: with it, node:test takes the child for a part of this
        // run and runs nothing.
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT')),
          [SPOOL_VARIABLE]: spool,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk) => (text += chunk));
      child.stderr.on('data', (chunk) => (text += chunk));
      child.on('close', () => resolve(text));
    });
    outputs.set(file, output);
  }
  return outputs;
}
