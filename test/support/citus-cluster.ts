// A real Citus cluster for the tests of test/citus: a coordinator and two workers, each its own
// PostgreSQL server (initdb into a temporary directory, `shared_preload_libraries = citus`, a port of
// its own, started with pg_ctl), joined as docs/scaling.md says, and torn down at the end of the file.
// Citus is not in the package registries: .ci/run builds it from ../shared/citus when that folder is
// there. Where it is not installed, `citusUnavailable()` says why and the tier skips with that reason.
import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync, globSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before } from 'node:test';
import pg from 'pg';
import { freePort } from './app.ts';
import { spawnCli } from './process.ts';

const run = promisify(execFile);

/** The PostgreSQL installation Citus was built into (the newest one with citus.so), if any. */
function citusInstallation(): { binDir: string; library: string } | undefined {
  const libraries = globSync('/usr/lib/postgresql/*/lib/citus.so').sort(
    (a, b) => Number(b.split('/')[4]) - Number(a.split('/')[4]),
  );
  const library = libraries[0];
  if (!library) return undefined;
  return { binDir: path.join(path.dirname(path.dirname(library)), 'bin'), library };
}

/** Why no cluster can be started on this machine (undefined when one can). */
export function citusUnavailable(): string | undefined {
  const installed = citusInstallation();
  if (!installed) {
    return 'Citus is not installed (no /usr/lib/postgresql/*/lib/citus.so): .ci/run builds it with ../shared/citus/install.sh when that folder exists; run it as root to enable this tier';
  }
  for (const tool of ['initdb', 'pg_ctl']) {
    if (!existsSync(path.join(installed.binDir, tool)))
      return `Citus is installed (${installed.library}) but ${installed.binDir}/${tool} is missing`;
  }
  if (userInfo().uid === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) {
    return 'running as root, and PostgreSQL refuses to run as root: runuser (util-linux) is needed to start it as the postgres user';
  }
  return undefined;
}

export interface CitusNode {
  name: 'coordinator' | 'worker-1' | 'worker-2';
  port: number;
  dataDir: string;
}

export interface CitusCluster {
  nodes: CitusNode[];
  /** The coordinator's database (`postgres`), where the extension is created and the workers added. */
  coordinatorUrl: string;
  /** The connection string of one node's `postgres` database. */
  urlOf(node: CitusNode): string;
  /** The server logs of every node (for a failure's message). */
  logs(): Promise<string>;
  stop(): Promise<void>;
}

// Settings for a throw-away cluster: no durability (the data dies with the test), and two shards per
// distributed table, one on each worker (Citus's default of 32 makes distributing some forty tables take
// minutes even on a quiet machine; two keep a statement that spans shards spanning nodes).
const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "shared_preload_libraries = 'citus'",
  'fsync = off',
  'synchronous_commit = off',
  'full_page_writes = off',
  'max_connections = 200',
  'shared_buffers = 32MB',
  'citus.shard_count = 2',
  "log_min_messages = 'warning'",
  "log_min_error_statement = 'error'",
];

/** A command of the PostgreSQL installation, as the postgres user when this process is root. */
async function asPostgres(binDir: string, tool: string, args: string[]): Promise<string> {
  const command = path.join(binDir, tool);
  const [file, argv] = userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const { stdout } = await run(file, argv, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function query(url: string, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** Starts a coordinator and two workers with the citus extension, the workers added to the coordinator. */
export async function startCitusCluster(): Promise<CitusCluster> {
  const installed = citusInstallation();
  const reason = citusUnavailable();
  if (!installed || reason) throw new Error(reason ?? 'Citus is not installed');
  const root = await mkdtemp(path.join(tmpdir(), 'orgplane-citus-'));
  if (userInfo().uid === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(group.trim()));
  }
  const names = ['coordinator', 'worker-1', 'worker-2'] as const;
  const nodes: CitusNode[] = [];
  for (const name of names) nodes.push({ name, port: await freePort(), dataDir: path.join(root, name) });
  const urlOf = (node: CitusNode) => `postgres://postgres@127.0.0.1:${node.port}/postgres`;
  const logFile = (node: CitusNode) => path.join(root, `${node.name}.log`);
  const started: CitusNode[] = [];

  const stop = async () => {
    await Promise.all(
      started.map((node) =>
        asPostgres(installed.binDir, 'pg_ctl', ['stop', '-D', node.dataDir, '-m', 'immediate', '-w']).catch(() => {}),
      ),
    );
    started.length = 0;
    await rm(root, { recursive: true, force: true });
  };
  const logs = async () => {
    const texts = await Promise.all(
      nodes.map(
        async (node) =>
          `--- ${node.name} (port ${node.port}) ---\n${await readFile(logFile(node), 'utf8').catch(() => '(no log)')}`,
      ),
    );
    return texts.join('\n');
  };

  try {
    await Promise.all(
      nodes.map(async (node) => {
        await asPostgres(installed.binDir, 'initdb', [
          '-D',
          node.dataDir,
          '-U',
          'postgres',
          '--auth=trust',
          '--no-sync',
          '--encoding=UTF8',
          '--locale=C',
        ]);
        await appendFile(
          path.join(node.dataDir, 'postgresql.conf'),
          `\n# orgplane's Citus test tier\n${[...SETTINGS, `port = ${node.port}`, `unix_socket_directories = '${root}'`].join('\n')}\n`,
        );
        await asPostgres(installed.binDir, 'pg_ctl', [
          'start',
          '-D',
          node.dataDir,
          '-l',
          logFile(node),
          '-w',
          '-t',
          '60',
        ]);
        started.push(node);
        await query(urlOf(node), 'CREATE EXTENSION citus');
      }),
    );
    const [coordinator, ...workers] = nodes;
    await query(urlOf(coordinator!), 'SELECT citus_set_coordinator_host($1, $2)', ['127.0.0.1', coordinator!.port]);
    for (const worker of workers)
      await query(urlOf(coordinator!), 'SELECT citus_add_node($1, $2)', ['127.0.0.1', worker.port]);
    return { nodes, coordinatorUrl: urlOf(coordinator!), urlOf, logs, stop };
  } catch (error) {
    const text = await logs();
    await stop();
    throw new Error(`the Citus cluster did not start: ${(error as Error).message}\n${text}`);
  }
}

/**
 * For a test file: a cluster started before its tests and stopped after them, or the reason none can
 * start here (`skip`, for the tests' `{ skip }` option: the file then runs nothing and says why).
 */
export function useCitusCluster(): {
  readonly skip: string | undefined;
  readonly cluster: CitusCluster;
  readonly ready: Promise<void>;
} {
  const skip = citusUnavailable();
  let cluster: CitusCluster | undefined;
  const started = Promise.withResolvers<void>();
  started.promise.catch(() => {});
  before(
    async () => {
      if (skip) return started.resolve();
      try {
        cluster = await startCitusCluster();
        started.resolve();
      } catch (error) {
        started.reject(error);
        throw error;
      }
    },
    { timeout: 180_000 },
  );
  after(async () => {
    await cluster?.stop();
  });
  return {
    skip,
    get cluster() {
      if (!cluster) throw new Error(skip ?? 'the cluster starts in before(): use it inside a test or hook');
      return cluster;
    },
    ready: started.promise,
  };
}

/**
 * `orgplane distribute` on the coordinator, as an operator runs it (it migrates first): resolves with
 * what it printed, one `table: outcome` line per table; throws with its output when it fails.
 */
export async function distributeOn(cluster: CitusCluster): Promise<string> {
  const cli = spawnCli(['distribute'], { DATABASE_URL: cluster.coordinatorUrl });
  // Distributing some forty tables takes 15 s on a quiet machine, minutes on a busy one (the file's own
  // limit in scripts/test.ts, 8 minutes, is the one that counts).
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 420_000);
  const code = await cli.exited;
  clearTimeout(timer);
  const output = cli.output();
  if (code !== 0) throw new Error(`orgplane distribute exited with ${code}:\n${output}\n${await cluster.logs()}`);
  return output;
}
