import { Resolver } from 'node:dns';
import { z } from 'zod';

/** Every setting orgplane reads from the environment, with its default. `orgplane --help` prints this list. */
export const configVariables = [
  ['PORT', '8080', 'TCP port the HTTP server listens on'],
  ['HOST', '0.0.0.0', 'interface the HTTP server binds'],
  ['PUBLIC_URL', 'http://localhost:PORT', 'external base URL (install links, webhooks, OAuth callbacks, SCIM base URL)'],
  ['DATABASE_URL', '(unset: embedded PGlite)', 'PostgreSQL connection string; unset runs on the embedded database in DATA_DIR'],
  ['DATA_DIR', './data', 'embedded database files and the generated secret key'],
  ['ORGPLANE_SECRET_KEY', '(generated into DATA_DIR)', 'key ring for encrypting stored credentials: "v2:<base64 32 bytes>,v1:<...>" (first is current) or one base64 key'],
  ['ALLOWED_PRIVATE_NETWORKS', '(empty)', 'comma-separated CIDRs outbound calls may reach despite being private/loopback'],
  ['DNS_SERVERS', '(system resolver)', 'comma-separated DNS servers (ip, ip:port or [ipv6]:port) for SSO domain verification'],
  ['DNS_TIMEOUT_MS', '2500', 'per-attempt timeout of those DNS lookups (two attempts per server)'],
  ['DESKTOP_DOWNLOAD_URL', 'https://github.com/orgplane/desktop/releases/latest', 'where the install page\'s "Download" action points'],
  ['MESSENGER_API_ROOT', 'https://api.telegram.org', 'messaging platform Bot API root'],
  ['LOG_LEVEL', 'info', 'pino log level: fatal, error, warn, info, debug, trace, silent'],
  ['DB_POOL_SIZE', '10', 'PostgreSQL connections per process (PGlite always uses one)'],
  ['SESSION_TTL_HOURS', '720', 'lifetime of a session token'],
  ['SIGN_UP_ENABLED', 'true', 'whether POST /v1/auth/sign-up is open'],
  ['RUN_WORKERS', 'true', 'whether `start` also runs the queue workers in-process'],
  ['MESSENGER_DELIVERY_ATTEMPTS', '8', 'attempts to deliver an update before it is dead-lettered'],
  ['MESSENGER_DELIVERY_RETRY_DELAY_SECONDS', '2', 'first delivery retry delay; each retry waits about twice as long (with jitter)'],
  ['MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS', '300', 'upper bound of one delivery retry delay'],
  ['MESSENGER_DELIVERY_TIMEOUT_MS', '10000', 'timeout of one POST to a delivery URL'],
  ['MESSENGER_DELIVERY_EXPIRE_SECONDS', '60', 'a delivery still running after this long (worker died) is retried'],
  ['MESSENGER_DELIVERY_CONCURRENCY', '8', 'deliveries processed at once per process (of different chats)'],
] as const;

const listOf = z
  .string()
  .optional()
  .transform((value) => (value ?? '').split(',').map((item) => item.trim()).filter(Boolean));

// Judged by the resolver that will use the list, so a server it would refuse stops the start here
// rather than failing every SSO domain verification later.
const dnsServerList = listOf.refine(
  (servers) => {
    try {
      new Resolver().setServers(servers);
      return true;
    } catch {
      return false;
    }
  },
  'must be IP addresses, each optionally with a port: 192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53',
);

const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((value) => (value === undefined ? fallback : ['true', '1', 'yes'].includes(value)));

const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.url().optional(),
  DATABASE_URL: z.string().min(1).optional(),
  DATA_DIR: z.string().default('./data'),
  ORGPLANE_SECRET_KEY: z.string().min(1).optional(),
  ALLOWED_PRIVATE_NETWORKS: listOf,
  DNS_SERVERS: dnsServerList,
  DNS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60000).default(2500),
  DESKTOP_DOWNLOAD_URL: z.url().default('https://github.com/orgplane/desktop/releases/latest'),
  MESSENGER_API_ROOT: z.url().default('https://api.telegram.org'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  SESSION_TTL_HOURS: z.coerce.number().positive().default(720),
  SIGN_UP_ENABLED: booleanFlag(true),
  RUN_WORKERS: booleanFlag(true),
});

export interface Config {
  port: number;
  host: string;
  /** No trailing slash. */
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Key ring text; undefined means "generate or read DATA_DIR/secret.key". */
  secretKey: string | undefined;
  allowedPrivateNetworks: string[];
  dnsServers: string[];
  /** Per-attempt timeout of SSO DNS lookups. */
  dnsTimeoutMs: number;
  /** The install page's download action. */
  desktopDownloadUrl: string;
  messengerApiRoot: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dbPoolSize: number;
  sessionTtlHours: number;
  signUpEnabled: boolean;
  runWorkers: boolean;
}

export function loadConfig(environment: Record<string, string | undefined> = process.env): Config {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const env = parsed.data;
  return {
    port: env.PORT,
    host: env.HOST,
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    secretKey: env.ORGPLANE_SECRET_KEY,
    allowedPrivateNetworks: env.ALLOWED_PRIVATE_NETWORKS,
    dnsServers: env.DNS_SERVERS,
    dnsTimeoutMs: env.DNS_TIMEOUT_MS,
    desktopDownloadUrl: env.DESKTOP_DOWNLOAD_URL,
    messengerApiRoot: env.MESSENGER_API_ROOT.replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL,
    dbPoolSize: env.DB_POOL_SIZE,
    sessionTtlHours: env.SESSION_TTL_HOURS,
    signUpEnabled: env.SIGN_UP_ENABLED,
    runWorkers: env.RUN_WORKERS,
  };
}
