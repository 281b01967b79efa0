import path from 'node:path';
import { parseArgs } from 'node:util';
import { configVariables, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { createIdentityService, type Plan } from './modules/identity/service.ts';
import { runProbeCli } from './modules/mcp-connections/probe/index.ts';
import { startMessengerWorker } from './modules/messenger/index.ts';
import { loggerOptions } from './http/logging.ts';
import { createOutboundClient } from './platform/outbound.ts';
import { createSecretBox, loadOrCreateKeyRing } from './platform/secrets.ts';
import { pino } from 'pino';
import { createRateLimiter } from './platform/rate-limiter.ts';
import { startServer } from './server.ts';

const usage = `orgplane: control plane for multi-tenant AI workspaces

Usage:
  orgplane start                         migrate, then serve HTTP (and run queue workers unless RUN_WORKERS=false)
  orgplane migrate                       apply pending database migrations and exit
  orgplane bootstrap --email E --password P --name N --org O
                                         create the first user (instance administrator) and organization
  orgplane org set-plan <organizationId> <free|team|enterprise>
  orgplane worker                        run queue workers only
  orgplane probe <url> [--api-key K]     probe an MCP server; prints the diagnostic JSON
  orgplane --help

Environment:
${configVariables.map(([name, fallback, meaning]) => `  ${name.padEnd(26)} ${meaning} (default: ${fallback})`).join('\n')}
`;

async function openMigratedDatabase() {
  const config = loadConfig();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDataDir: path.join(config.dataDir, 'pglite'),
    poolSize: Math.min(config.dbPoolSize, 5),
  });
  await migrate(db);
  return { config, db };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const config = loadConfig();
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
    case 'bootstrap': {
      const { values } = parseArgs({
        args: rest,
        options: { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, org: { type: 'string' } },
      });
      if (!values.email || !values.password || !values.name || !values.org) {
        console.error('bootstrap needs --email, --password, --name and --org');
        return 2;
      }
      const { config, db } = await openMigratedDatabase();
      try {
        const identity = createIdentityService({ db, rateLimiter: createRateLimiter(db), sessionTtlHours: config.sessionTtlHours, signUpEnabled: true });
        const result = await identity.bootstrap({ email: values.email, password: values.password, name: values.name, organizationName: values.org });
        console.log(JSON.stringify({ userId: result.user.id, organizationId: result.organization.id, sessionToken: result.sessionToken }, null, 2));
        return 0;
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
        const identity = createIdentityService({ db, rateLimiter: createRateLimiter(db), sessionTtlHours: config.sessionTtlHours, signUpEnabled: true });
        const organization = await identity.setPlan('cli', organizationId, plan as Plan);
        console.log(JSON.stringify({ id: organization.id, name: organization.name, plan: organization.plan }));
        return 0;
      } finally {
        await db.close();
      }
    }
    case 'worker': {
      const { config, db } = await openMigratedDatabase();
      const keyRing = await loadOrCreateKeyRing(config.secretKey, config.dataDir);
      const outbound = createOutboundClient({ allowedPrivateNetworks: config.allowedPrivateNetworks });
      const log = pino(loggerOptions(config.logLevel));
      const worker = await startMessengerWorker({
        db,
        secrets: createSecretBox(keyRing),
        outbound,
        messengerApiRoot: config.messengerApiRoot,
        log,
      });
      log.info({ backend: db.backend }, 'orgplane worker running');
      const stop = async (signal: string) => {
        log.info({ signal }, 'worker shutting down: finishing jobs in hand');
        await worker.stop();
        await outbound.close();
        await db.close();
        process.exit(0);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
      return -1;
    }
    case 'probe':
      return runProbeCli(rest);
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
    console.error(apiError.code ? `${apiError.code}: ${apiError.message}` : error);
    process.exit(1);
  },
);
