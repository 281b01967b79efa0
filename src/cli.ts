import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { configVariables } from './config-variables.ts';
import { DataDirInUseError, lockDataDir } from './db/data-dir-lock.ts';
import { openDatabase } from './db/database.ts';
import { CitusMissingError, distribute } from './db/distribute.ts';
import { migrate } from './db/migrate.ts';
import { compose, composeCore, organizationErasers, sealedColumns } from './composition.ts';
import { installAuditLog, listChains, pruneAuditEvents, verifyChainOf } from './modules/audit/index.ts';
import { createOrganizationService, type Plan } from './modules/organizations/index.ts';
import { bootstrapBodySchema, createUserService } from './modules/users/index.ts';
import { runProbeCli } from './modules/mcp-connections/probe/index.ts';
import { loggerOptions } from './http/logging.ts';
import { startBackgroundWorkers } from './platform/background.ts';
import { createOutboundClient } from './platform/outbound.ts';
import { checkKeyRing, KeyRingMismatchError, loadOrCreateKeyRing, openSecretBox } from './platform/secrets.ts';
import { resealSecrets } from './operations/reseal.ts';
import { packageVersion } from './version.ts';
import { pino } from 'pino';
import { systemContext } from './platform/write-context.ts';
import { startServer } from './server.ts';

const usage = `orgplane: control plane for multi-tenant AI workspaces

Usage:
  orgplane start                         migrate, then serve HTTP (and run the background workers unless RUN_WORKERS=false)
  orgplane migrate                       apply pending database migrations and exit
  orgplane distribute                    on a Citus coordinator: distribute the tables by tenant (docs/scaling.md)
  orgplane bootstrap --email E --password P --name N --org O
                                         create the first user (instance administrator) and organization
  orgplane org set-plan <organizationId> <free|team|enterprise>
  orgplane audit verify [--org ID]       check the audit hash chains (or one organization's); exit 1 at the first broken link
  orgplane audit prune                   remove audit events older than AUDIT_RETENTION_DAYS (leaving checkpoints)
  orgplane worker                        run the background workers only (those start runs unless RUN_WORKERS=false)
  orgplane secrets reseal                re-encrypt every stored secret under the newest key of ORGPLANE_SECRET_KEY,
                                         then forget the older keys nothing is sealed with (they may leave the ring)
  orgplane probe <url> [--api-key K]     probe an MCP server; prints the diagnostic JSON
  orgplane --version                     print the version
  orgplane --help

Environment:
${configVariables.map(([name, fallback, meaning]) => `  ${name.padEnd(26)} ${meaning} (default: ${fallback})`).join('\n')}
`;

// The flags are checked with the API's own body schema: the CLI creates exactly the accounts the API
// would (an e-mail the sign-in accepts, a password the sign-in can check, trimmed names).
const bootstrapFlags: Record<string, string> = {
  email: '--email',
  password: '--password',
  name: '--name',
  organizationName: '--org',
};

/**
 * Config of a command that opens the database. On the embedded database, the data directory is locked
 * first, before anything in it is read or written, and held until the process exits: PGlite is one
 * process's database, so a second process on the same DATA_DIR is refused (DataDirInUseError).
 */
async function loadConfigAndLockDataDir(): Promise<Config> {
  const config = loadConfig();
  if (!config.databaseUrl) await lockDataDir(path.join(config.dataDir, 'pglite'));
  return config;
}

async function openMigratedDatabase() {
  const config = await loadConfigAndLockDataDir();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDataDir: path.join(config.dataDir, 'pglite'),
    poolSize: Math.min(config.dbPoolSize, 5),
  });
  await migrate(db);
  // The CLI's writes (bootstrap, plan changes) are audited like the API's.
  installAuditLog();
  return { config, db };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const config = await loadConfigAndLockDataDir();
      const server = await startServer(config);
      server.app.log.info({ url: server.url, backend: server.db.backend }, 'orgplane listening');
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        await server.close();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return -1;
    }
    case 'migrate': {
      const { db } = await openMigratedDatabase();
      await db.close();
      console.log('migrations applied');
      return 0;
    }
    case 'distribute': {
      const { db } = await openMigratedDatabase();
      const session = await db.pool.connect();
      try {
        for (const result of await distribute(session)) console.log(`${result.table}: ${result.outcome}`);
        return 0;
      } finally {
        session.release();
        await db.close();
      }
    }
    case 'bootstrap': {
      const { values } = parseArgs({
        args: rest,
        options: {
          email: { type: 'string' },
          password: { type: 'string' },
          name: { type: 'string' },
          org: { type: 'string' },
        },
      });
      if (
        values.email === undefined ||
        values.password === undefined ||
        values.name === undefined ||
        values.org === undefined
      ) {
        console.error('bootstrap needs --email, --password, --name and --org');
        return 2;
      }
      const input = bootstrapBodySchema.safeParse({
        email: values.email,
        password: values.password,
        name: values.name,
        organizationName: values.org,
      });
      if (!input.success) {
        const problems = input.error.issues.map(
          (issue) => `${bootstrapFlags[String(issue.path[0])] ?? issue.path.join('.')}: ${issue.message}`,
        );
        console.error(`bootstrap: nothing was created:\n  ${problems.join('\n  ')}`);
        return 2;
      }
      const { config, db } = await openMigratedDatabase();
      try {
        const core = composeCore({ config, db });
        const users = createUserService({
          db,
          rateLimiter: core.rateLimiter,
          signUpEnabled: true,
          signUpAttemptsPerAddress: config.signUpAttemptsPerAddress,
          membership: core.membership,
          organizations: core.organizations,
          passwordSignInPolicy: core.passwordSignInPolicy,
        });
        const result = await users.bootstrap(input.data);
        console.log(
          JSON.stringify(
            { userId: result.user.id, organizationId: result.organization.id, sessionToken: result.sessionToken },
            null,
            2,
          ),
        );
        return 0;
      } finally {
        await db.close();
      }
    }
    case 'audit': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { org: { type: 'string' } },
        allowPositionals: true,
      });
      if (
        !['verify', 'prune'].includes(positionals[0] ?? '') ||
        positionals.length !== 1 ||
        (positionals[0] === 'prune' && values.org !== undefined)
      ) {
        console.error('usage: orgplane audit verify [--org ID] | orgplane audit prune');
        return 2;
      }
      const { config, db } = await openMigratedDatabase();
      if (positionals[0] === 'prune') {
        try {
          console.log(JSON.stringify(await pruneAuditEvents(db, config.auditRetentionDays)));
          return 0;
        } finally {
          await db.close();
        }
      }
      try {
        const chains = values.org !== undefined ? [values.org] : await listChains(db);
        let broken = false;
        for (const chain of chains) {
          const result = await verifyChainOf(db, chain);
          console.log(JSON.stringify({ organizationId: chain, ...result }));
          if (!result.ok) broken = true;
        }
        return broken ? 1 : 0;
      } finally {
        await db.close();
      }
    }
    case 'org': {
      const [action, organizationId, plan] = rest;
      if (action !== 'set-plan' || !organizationId || !['free', 'team', 'enterprise'].includes(plan ?? '')) {
        console.error('usage: orgplane org set-plan <organizationId> <free|team|enterprise>');
        return 2;
      }
      const { config, db } = await openMigratedDatabase();
      try {
        const organizations = createOrganizationService({
          db,
          membership: composeCore({ config, db }).membership,
          erasers: organizationErasers,
        });
        const organization = await organizations.setPlan(systemContext('cli'), organizationId, plan as Plan);
        console.log(JSON.stringify({ id: organization.id, name: organization.name, plan: organization.plan }));
        return 0;
      } finally {
        await db.close();
      }
    }
    case 'worker': {
      const { config, db } = await openMigratedDatabase();
      const secrets = await openSecretBox(db, config.secretKey, config.dataDir);
      const outbound = createOutboundClient({ allowedPrivateNetworks: config.allowedPrivateNetworks });
      const log = pino(loggerOptions(config.logLevel));
      // The jobs `orgplane start` runs with RUN_WORKERS, from the same list (composition.ts).
      const workers = startBackgroundWorkers((await compose({ config, db, secrets, outbound, log })).workers, log);
      log.info({ backend: db.backend }, 'orgplane worker running');
      const stop = async (signal: string) => {
        log.info({ signal }, 'worker shutting down: finishing jobs in hand');
        await workers.stop();
        await outbound.close();
        await db.close();
        process.exit(0);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
      return -1;
    }
    case 'secrets': {
      if (rest[0] !== 'reseal' || rest.length !== 1) {
        console.error('usage: orgplane secrets reseal');
        return 2;
      }
      const { config, db } = await openMigratedDatabase();
      try {
        const keyRing = await loadOrCreateKeyRing(config.secretKey, config.dataDir);
        // The ring must be one this database accepts (the same check a server's start makes).
        await checkKeyRing(db, keyRing);
        const result = await resealSecrets(db, keyRing, sealedColumns);
        for (const count of result.tables)
          console.log(
            `${count.table}: ${count.resealed} re-sealed under ${result.currentVersion}, ${count.failed} failed`,
          );
        if (result.retired.length > 0)
          console.log(
            `retired: ${result.retired.join(', ')} (nothing is sealed with them: they may leave the key ring)`,
          );
        if (result.kept.length > 0)
          console.log(`kept: ${result.kept.join(', ')} (secrets sealed with them remain: keep them in the key ring)`);
        return result.tables.some((count) => count.failed > 0) ? 1 : 0;
      } finally {
        await db.close();
      }
    }
    case 'probe':
      return runProbeCli(rest);
    case '--version':
    case '-v':
    case 'version':
      console.log(packageVersion);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(usage);
      return command === undefined ? 2 : 0;
    default:
      console.error(`unknown command "${command}"\n\n${usage}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    const apiError = error as { code?: string; message?: string };
    // Operator mistakes are told in one sentence, without a stack trace.
    if (
      error instanceof ConfigError ||
      error instanceof DataDirInUseError ||
      error instanceof KeyRingMismatchError ||
      error instanceof CitusMissingError
    )
      console.error(
        error.message
          .split('\n')
          .map((line) => `orgplane: ${line}`)
          .join('\n'),
      );
    else console.error(apiError.code ? `${apiError.code}: ${apiError.message}` : error);
    process.exit(1);
  },
);
