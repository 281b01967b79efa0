import { Resolver } from 'node:dns';
import { isIP } from 'node:net';
import { z } from 'zod';

/** Every setting orgplane reads from the environment, with its default. `orgplane --help` prints this list. */
export const configVariables = [
  ['PORT', '8080', 'TCP port the HTTP server listens on'],
  ['HOST', '0.0.0.0', 'interface the HTTP server binds'],
  [
    'PUBLIC_URL',
    'http://localhost:PORT',
    'external base URL (install links, webhooks, OAuth callbacks, SCIM base URL)',
  ],
  [
    'DATABASE_URL',
    '(unset: embedded PGlite)',
    'PostgreSQL connection string; unset runs on the embedded database in DATA_DIR',
  ],
  [
    'DATA_DIR',
    './data',
    'embedded database files (locked by the one process that has them open) and the generated secret key',
  ],
  [
    'ORGPLANE_SECRET_KEY',
    '(generated into DATA_DIR)',
    'key ring for encrypting stored credentials: "v2:<base64 32 bytes>,v1:<...>" (first is current) or one base64 key',
  ],
  [
    'ALLOWED_PRIVATE_NETWORKS',
    '(empty)',
    'comma-separated CIDRs outbound calls may reach despite being private/loopback',
  ],
  [
    'TRUSTED_PROXIES',
    '(empty)',
    'comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For names the client (per-client rate limits, logs); empty: the connecting address is the client',
  ],
  [
    'REQUEST_TIMEOUT_MS',
    '30000',
    'time a client has to send a whole request, headers and body (a slower one gets 408 and is disconnected)',
  ],
  [
    'DNS_SERVERS',
    '(system resolver)',
    'comma-separated DNS servers (ip, ip:port or [ipv6]:port) for SSO domain verification',
  ],
  ['DNS_TIMEOUT_MS', '2500', 'per-attempt timeout of those DNS lookups (two attempts per server)'],
  [
    'CORS_ALLOWED_ORIGINS',
    '(empty)',
    'comma-separated origins (https://app.example.com) whose browser pages may call the /v1 API, /health, /ready and /openapi.json; empty: no cross-origin access',
  ],
  [
    'DESKTOP_DOWNLOAD_URL',
    '(unset: the install page says the download is not configured)',
    'where the install page\'s "Download" action points (an http(s) URL)',
  ],
  [
    'SSO_REDIRECT_URIS',
    '(empty)',
    "comma-separated redirect URIs, matched exactly, that SSO and desktop sign-in may return to besides the console's /sso/callback and /sso/test-done pages (SSO only), loopback on another port than this server's, and the desktop app's orgplane: scheme",
  ],
  [
    'SSO_CLOCK_SKEW_SECONDS',
    '60',
    'clock skew tolerated when checking ID token times (exp, iat) and SAML assertion times (0 to 600)',
  ],
  [
    'SMTP_URL',
    '(unset: no e-mail is sent)',
    'mail server for invitations: smtp://user:password@host:587 (STARTTLS when offered) or smtps://user:password@host:465',
  ],
  ['MAIL_FROM', 'orgplane <noreply@PUBLIC_URL host>', 'From address of the e-mail orgplane sends'],
  ['MESSENGER_API_ROOT', 'https://api.telegram.org', 'messaging platform Bot API root'],
  ['LOG_LEVEL', 'info', 'pino log level: fatal, error, warn, info, debug, trace, silent'],
  ['DB_POOL_SIZE', '10', 'PostgreSQL connections per process (PGlite always uses one)'],
  ['SESSION_TTL_HOURS', '720', 'lifetime of a session token, in whole hours (1 to 87600)'],
  [
    'REAUTH_MAX_AGE_SECONDS',
    '900',
    "how recent a session's last authentication must be for privileged operations (0 to 86400; 0 turns the rule off)",
  ],
  ['SIGN_UP_ENABLED', 'true', 'whether POST /v1/auth/sign-up is open'],
  [
    'SIGN_UP_ATTEMPTS_PER_ADDRESS',
    '20',
    'sign-up attempts one client address may make per hour, across all processes (1 to 1000000; raise it for a launch behind one NAT)',
  ],
  [
    'SSO_START_ATTEMPTS_PER_ADDRESS',
    '100',
    'SSO sign-ins (POST /v1/auth/sso/start) one client address may start per 15 minutes, across all processes (1 to 1000000; raise it when a whole company signs in from behind one NAT)',
  ],
  ['RUN_WORKERS', 'true', 'whether `start` also runs the background workers in-process (as `orgplane worker` does)'],
  [
    'AUDIT_RETENTION_DAYS',
    '365',
    'audit events older than this many days are pruned daily, leaving a checkpoint (1 to 36500)',
  ],
  [
    'AUDIT_RETENTION_FIRST_RUN_SECONDS',
    '60',
    'seconds from the start of a process that runs workers to its first pruning (0 to 86400); daily after it',
  ],
  [
    'AUDIT_STREAM_ATTEMPTS',
    '10',
    'failed attempts to deliver a batch to an audit-log stream before the stream is dead-lettered (stopped until re-enabled)',
  ],
  [
    'AUDIT_STREAM_RETRY_DELAY_SECONDS',
    '2',
    'first retry delay of an audit-log stream batch; each retry waits about twice as long (with jitter)',
  ],
  ['AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS', '300', 'upper bound of one audit-log stream retry delay'],
  ['AUDIT_STREAM_BATCH_SIZE', '100', 'events per POST to an audit-log stream (1 to 1000)'],
  ['AUDIT_STREAM_POLL_SECONDS', '1', 'how often idle audit-log stream workers look for new events (0.1 to 60)'],
  [
    'MCP_HEALTH_INTERVAL_SECONDS',
    '3600',
    'how often a process that runs workers probes each stored MCP credential (OAuth tokens are also refreshed before they expire); 0 turns the background checks off (0 to 604800)',
  ],
  [
    'MCP_HEALTH_FAILURE_THRESHOLD',
    '3',
    'consecutive background checks that fail without a definite answer (server unreachable, 5xx) before a credential is marked reconnect_required (1 to 100)',
  ],
  ['MESSENGER_DELIVERY_ATTEMPTS', '8', 'attempts to deliver an update before it is dead-lettered'],
  [
    'MESSENGER_DELIVERY_RETRY_DELAY_SECONDS',
    '2',
    'first delivery retry delay; each retry waits about twice as long (with jitter)',
  ],
  ['MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS', '300', 'upper bound of one delivery retry delay'],
  ['MESSENGER_DELIVERY_TIMEOUT_MS', '10000', 'timeout of one POST to a delivery URL'],
  ['MESSENGER_DELIVERY_EXPIRE_SECONDS', '60', 'a delivery still running after this long (worker died) is retried'],
  ['MESSENGER_DELIVERY_CONCURRENCY', '8', 'deliveries processed at once per process (of different chats)'],
  [
    'MESSENGER_DELIVERY_POLL_SECONDS',
    '1',
    'how often idle delivery workers look for queued updates (0.5 to 60; new updates here wake them at once)',
  ],
] as const;

/** Ten years. */
export const MAX_SESSION_TTL_HOURS = 87_600;

const listOf = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

// Judged by the resolver that will use the list, so a server it would refuse stops the start here
// rather than failing every SSO domain verification later.
const dnsServerList = listOf.refine((servers) => {
  try {
    new Resolver().setServers(servers);
    return true;
  } catch {
    return false;
  }
}, 'must be IP addresses, each optionally with a port: 192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53');

// A proxy trusted by mistake would let any client choose its address (X-Forwarded-For), and so its
// rate-limit bucket: an entry that is not an address or a CIDR stops the start.
const proxyList = listOf.refine(
  (entries) => entries.every(isAddressOrCidr),
  'must be IP addresses or CIDRs: 10.0.0.5, 10.0.0.0/8, fd00::/8',
);

// The outbound client dials private addresses only inside these networks: an entry that is not a CIDR
// (a host name such as localhost, a bare address) stops the start instead of failing the first call.
const networkList = listOf.refine(
  (entries) => entries.every((entry) => entry.includes('/') && isAddressOrCidr(entry)),
  'must be CIDRs, each an address and a prefix length: 10.0.0.0/8, 127.0.0.1/32, fd00::/8 (not a host name)',
);

/** An IP address in its usual form (not "10.0.0" or "0x7f.1"), optionally with a prefix length. */
function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/**
 * An origin as browsers send it (scheme, host, port; no path): each entry is normalized through the
 * URL parser (lower-case host, default port dropped, one trailing slash allowed), so it compares equal
 * to the Origin header. Anything else (a path, "*", "null") stops the start: a list that silently
 * matched nothing would look like a browser bug.
 */
function toOrigin(entry: string): string | undefined {
  if (!/^https?:\/\//i.test(entry)) return undefined;
  try {
    const url = new URL(entry);
    if (
      url.pathname !== '/' ||
      url.search ||
      url.hash ||
      url.username ||
      url.password ||
      entry.endsWith('?') ||
      entry.endsWith('#')
    )
      return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

const originList = listOf
  .refine(
    (entries) => entries.every((entry) => toOrigin(entry) !== undefined),
    'must be origins, each scheme://host[:port] with nothing after it: https://app.example.com, http://localhost:5173',
  )
  .transform((entries) => [...new Set(entries.map((entry) => toOrigin(entry)!))]);

const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false (or 1/0, yes/no)' })
    .optional()
    .transform((value) => (value === undefined ? fallback : ['true', '1', 'yes'].includes(value)));

/**
 * A whole number within [min, max]; a fraction is refused ("expected int") like any other wrong value,
 * so that a start stops at once rather than every request that uses the value failing later. An empty
 * value is refused too (coerced, it would silently be 0).
 */
const integerSetting = (fallback: number, min: number, max: number) =>
  z
    .preprocess(
      (value) => (typeof value === 'string' && value.trim() === '' ? Number.NaN : value),
      z.coerce
        .number({ error: `must be a whole number from ${min} to ${max}` })
        .int({ error: `must be a whole number (no fraction) from ${min} to ${max}` })
        .min(min, { error: `must be a whole number from ${min} to ${max}` })
        .max(max, { error: `must be a whole number from ${min} to ${max}` }),
    )
    .default(fallback);

/** A number of seconds with a fraction allowed (how often idle workers poll). */
const secondsSetting = (fallback: number, min: number, max: number) =>
  z.coerce
    .number({ error: `must be a number of seconds from ${min} to ${max}` })
    .min(min, { error: `must be a number of seconds from ${min} to ${max}` })
    .max(max, { error: `must be a number of seconds from ${min} to ${max}` })
    .default(fallback);

const environmentSchema = z
  .object({
    PORT: integerSetting(8080, 0, 65535),
    HOST: z
      .string()
      .refine((host) => isIP(host) !== 0 || /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host), {
        error: 'must be an IP address or a host name to listen on: 0.0.0.0, 127.0.0.1, ::, localhost',
      })
      .default('0.0.0.0'),
    PUBLIC_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL: https://orgplane.example.com' })
      .optional(),
    DATABASE_URL: z
      .string()
      .refine((url) => /^postgres(ql)?:\/\//.test(url) && URL.canParse(url), {
        error: 'must be a PostgreSQL connection URL: postgres://user:password@host:5432/database',
      })
      .optional(),
    DATA_DIR: z.string().min(1, { error: 'must be a directory path' }).default('./data'),
    ORGPLANE_SECRET_KEY: z.string().min(1, { error: 'must be a key ring (see orgplane --help)' }).optional(),
    ALLOWED_PRIVATE_NETWORKS: networkList,
    TRUSTED_PROXIES: proxyList,
    REQUEST_TIMEOUT_MS: integerSetting(30_000, 1000, 3_600_000),
    DNS_SERVERS: dnsServerList,
    DNS_TIMEOUT_MS: integerSetting(2500, 50, 60_000),
    CORS_ALLOWED_ORIGINS: originList,
    // No default: a made-up address would send people to a download that does not exist.
    DESKTOP_DOWNLOAD_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL: https://downloads.example.com/orgplane' })
      .optional(),
    SSO_REDIRECT_URIS: listOf.refine(
      (uris) => uris.every((uri) => URL.canParse(uri)),
      'must be absolute URIs separated by commas',
    ),
    SSO_CLOCK_SKEW_SECONDS: integerSetting(60, 0, 600),
    SMTP_URL: z
      .string()
      .refine((url) => /^smtps?:\/\/[^/]/.test(url) && URL.canParse(url), {
        error: 'must be an smtp:// or smtps:// URL: smtp://user:password@mail.example.com:587',
      })
      .optional(),
    MAIL_FROM: z
      .string()
      .refine((from) => /^([^<>\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(from.trim()), {
        error: 'must be an e-mail address, alone or with a name: orgplane <noreply@example.com>',
      })
      .optional(),
    MESSENGER_API_ROOT: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL: https://api.telegram.org' })
      .default('https://api.telegram.org'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
    DB_POOL_SIZE: integerSetting(10, 1, 500),
    // Whole hours: the session's expiry is computed in SQL from an integer parameter; at most ten years
    // (past about 68 years that computation overflows).
    SESSION_TTL_HOURS: integerSetting(720, 1, MAX_SESSION_TTL_HOURS),
    // At most a day: a privileged edit needs a person who authenticated recently, not one a session ago.
    REAUTH_MAX_AGE_SECONDS: integerSetting(900, 0, 86_400),
    SIGN_UP_ENABLED: booleanFlag(true),
    SIGN_UP_ATTEMPTS_PER_ADDRESS: integerSetting(20, 1, 1_000_000),
    SSO_START_ATTEMPTS_PER_ADDRESS: integerSetting(100, 1, 1_000_000),
    RUN_WORKERS: booleanFlag(true),
    AUDIT_RETENTION_DAYS: integerSetting(365, 1, 36_500),
    AUDIT_RETENTION_FIRST_RUN_SECONDS: integerSetting(60, 0, 86_400),
    AUDIT_STREAM_ATTEMPTS: integerSetting(10, 1, 1000),
    AUDIT_STREAM_RETRY_DELAY_SECONDS: integerSetting(2, 1, 86_400),
    AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS: integerSetting(300, 1, 86_400),
    AUDIT_STREAM_BATCH_SIZE: integerSetting(100, 1, 1000),
    AUDIT_STREAM_POLL_SECONDS: secondsSetting(1, 0.1, 60),
    // At most a week: a credential checked less often than that is not being watched.
    MCP_HEALTH_INTERVAL_SECONDS: integerSetting(3600, 0, 604_800),
    MCP_HEALTH_FAILURE_THRESHOLD: integerSetting(3, 1, 100),
    // Whole numbers only: the queue keeps delays and expiry in whole seconds, and attempts and concurrency
    // are counts. The queue refuses an expiry over 24 hours.
    MESSENGER_DELIVERY_ATTEMPTS: integerSetting(8, 1, 1000),
    MESSENGER_DELIVERY_RETRY_DELAY_SECONDS: integerSetting(2, 1, 86_400),
    MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS: integerSetting(300, 1, 86_400),
    MESSENGER_DELIVERY_TIMEOUT_MS: integerSetting(10_000, 100, 3_600_000),
    MESSENGER_DELIVERY_EXPIRE_SECONDS: integerSetting(60, 1, 86_400),
    MESSENGER_DELIVERY_CONCURRENCY: integerSetting(8, 1, 1000),
    MESSENGER_DELIVERY_POLL_SECONDS: secondsSetting(1, 0.5, 60),
  })
  .refine((env) => env.AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS >= env.AUDIT_STREAM_RETRY_DELAY_SECONDS, {
    path: ['AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS'],
    message: 'must be at least AUDIT_STREAM_RETRY_DELAY_SECONDS',
  })
  .refine((env) => env.MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS >= env.MESSENGER_DELIVERY_RETRY_DELAY_SECONDS, {
    path: ['MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS'],
    message: 'must be at least MESSENGER_DELIVERY_RETRY_DELAY_SECONDS',
  })
  // A delivery still running when it expires is presumed lost and given to another worker: one that
  // may legitimately take longer would be delivered twice.
  .refine((env) => env.MESSENGER_DELIVERY_TIMEOUT_MS < env.MESSENGER_DELIVERY_EXPIRE_SECONDS * 1000, {
    path: ['MESSENGER_DELIVERY_TIMEOUT_MS'],
    message: 'must be shorter than MESSENGER_DELIVERY_EXPIRE_SECONDS',
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
  /** Reverse proxies (IPs, CIDRs) whose X-Forwarded-For names the client; empty trusts none. */
  trustedProxies: string[];
  /** Time a client has to send a whole request (headers and body); past it, 408 and the connection is closed. */
  requestTimeoutMs: number;
  dnsServers: string[];
  /** Per-attempt timeout of SSO DNS lookups. */
  dnsTimeoutMs: number;
  /** Origins (normalized, as browsers send them) whose pages may call the API cross-origin; empty: none. */
  corsAllowedOrigins: string[];
  /** The install page's download action; null when DESKTOP_DOWNLOAD_URL is unset (the page says so). */
  desktopDownloadUrl: string | null;
  /** Redirect URIs, matched exactly, sign-ins may return to besides the console's pages, loopback and orgplane: (SSO_REDIRECT_URIS; platform/redirect-uris.ts). */
  ssoRedirectUris: string[];
  /** Clock skew tolerated in ID token and assertion times (SSO_CLOCK_SKEW_SECONDS). */
  ssoClockSkewSeconds: number;
  messengerApiRoot: string;
  /** Outgoing e-mail (platform/mailer.ts): no smtpUrl, no mail; the From address. */
  mail: { smtpUrl: string | null; from: string };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dbPoolSize: number;
  sessionTtlHours: number;
  /** How recent a session's last authentication must be for privileged operations; 0: no such rule. */
  reauthMaxAgeSeconds: number;
  signUpEnabled: boolean;
  /** Sign-up attempts one client address may make per hour (the per-e-mail limit is fixed). */
  signUpAttemptsPerAddress: number;
  /** SSO sign-ins one client address may start per 15 minutes (SSO_START_ATTEMPTS_PER_ADDRESS). */
  ssoStartAttemptsPerAddress: number;
  runWorkers: boolean;
  /** Days an audit event is kept (AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /** Seconds from a worker process's start to its first pruning (AUDIT_RETENTION_FIRST_RUN_SECONDS). */
  auditRetentionFirstRunSeconds: number;
  /** Delivery of audit-log streams (AUDIT_STREAM_*). */
  auditStream: AuditStreamSettings;
  /** The messenger's queued deliveries (MESSENGER_DELIVERY_*). */
  messengerDelivery: DeliverySettings;
  /** Background checks of MCP credentials (MCP_HEALTH_*). */
  mcpHealth: McpHealthSettings;
}

/** How MCP credentials are checked in the background (MCP_HEALTH_*); the job is off when intervalSeconds is 0. */
export interface McpHealthSettings {
  /** Time between two probes of one credential; 0: no background checks. */
  intervalSeconds: number;
  /** Consecutive inconclusive failures before reconnect_required. */
  failureThreshold: number;
  /** How often a process looks for due checks. */
  pollSeconds: number;
  /** An OAuth access token is refreshed by the job this long before it expires. */
  refreshMarginSeconds: number;
  /** How long a process holds a connection it checks; one that dies leaves it to expire. */
  leaseSeconds: number;
  /** Connections a process claims at a time (from one organization or several), and checks before claiming more. */
  batchSize: number;
  concurrency: number;
}

/** How audit-log streams are delivered (AUDIT_STREAM_*). */
export interface AuditStreamSettings {
  /** Failed attempts of one batch before the stream is dead-lettered. */
  maxAttempts: number;
  retryDelaySeconds: number;
  maxRetryDelaySeconds: number;
  batchSize: number;
  pollingIntervalSeconds: number;
  /** Timeout of one POST; shorter than the lease, so an attempt never outlives it. */
  deliveryTimeoutMs: number;
  /** How long a worker holds a stream for one attempt; a worker that dies leaves it to expire. */
  leaseSeconds: number;
}

/** How the messenger's queued deliveries are retried and processed (MESSENGER_DELIVERY_*). */
export interface DeliverySettings {
  /** Attempts in all before an update is dead-lettered. */
  maxAttempts: number;
  /** First retry delay, seconds (then roughly doubling, with jitter). */
  retryDelaySeconds: number;
  maxRetryDelaySeconds: number;
  /** A delivery still running after this long is presumed lost (worker died) and retried. */
  expireInSeconds: number;
  /** Timeout of one POST to the delivery URL. */
  deliveryTimeoutMs: number;
  /** Deliveries processed at once per process (of different chats). */
  concurrency: number;
  pollingIntervalSeconds: number;
}

/**
 * A configuration that cannot be used. Its message is one line per setting at fault, naming the
 * setting, the value given (hidden for the two that hold secrets) and what is allowed.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Settings whose value is a secret (a key, a password in a URL): never repeated in a message. */
const secretSettings: ReadonlySet<string> = new Set(['ORGPLANE_SECRET_KEY', 'DATABASE_URL', 'SMTP_URL']);

/** `NAME="value": what is allowed`, on one line whatever the value holds. */
function describeProblem(name: string, value: string | undefined, problem: string): string {
  const shown = value === undefined ? '(unset)' : secretSettings.has(name) ? '(value hidden)' : JSON.stringify(value);
  return `Invalid configuration: ${name}=${shown}: ${problem}`;
}

export function loadConfig(environment: Record<string, string | undefined> = process.env): Config {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) {
    // One line per setting: its first problem (a value out of range may also fail a rule that compares it).
    const problems = new Map<string, string>();
    for (const issue of parsed.error.issues) {
      const name = issue.path.join('.');
      if (!problems.has(name)) problems.set(name, describeProblem(name, environment[name], issue.message));
    }
    throw new ConfigError([...problems.values()].join('\n'));
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
    trustedProxies: env.TRUSTED_PROXIES,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    dnsServers: env.DNS_SERVERS,
    dnsTimeoutMs: env.DNS_TIMEOUT_MS,
    corsAllowedOrigins: env.CORS_ALLOWED_ORIGINS,
    desktopDownloadUrl: env.DESKTOP_DOWNLOAD_URL ?? null,
    ssoRedirectUris: env.SSO_REDIRECT_URIS,
    ssoClockSkewSeconds: env.SSO_CLOCK_SKEW_SECONDS,
    messengerApiRoot: env.MESSENGER_API_ROOT.replace(/\/+$/, ''),
    mail: {
      smtpUrl: env.SMTP_URL ?? null,
      from:
        env.MAIL_FROM?.trim() ??
        `orgplane <noreply@${new URL(env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).hostname.replace(/^\[|\]$/g, '')}>`,
    },
    logLevel: env.LOG_LEVEL,
    dbPoolSize: env.DB_POOL_SIZE,
    sessionTtlHours: env.SESSION_TTL_HOURS,
    reauthMaxAgeSeconds: env.REAUTH_MAX_AGE_SECONDS,
    signUpEnabled: env.SIGN_UP_ENABLED,
    signUpAttemptsPerAddress: env.SIGN_UP_ATTEMPTS_PER_ADDRESS,
    ssoStartAttemptsPerAddress: env.SSO_START_ATTEMPTS_PER_ADDRESS,
    runWorkers: env.RUN_WORKERS,
    auditRetentionDays: env.AUDIT_RETENTION_DAYS,
    auditRetentionFirstRunSeconds: env.AUDIT_RETENTION_FIRST_RUN_SECONDS,
    auditStream: {
      maxAttempts: env.AUDIT_STREAM_ATTEMPTS,
      retryDelaySeconds: env.AUDIT_STREAM_RETRY_DELAY_SECONDS,
      maxRetryDelaySeconds: env.AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS,
      batchSize: env.AUDIT_STREAM_BATCH_SIZE,
      pollingIntervalSeconds: env.AUDIT_STREAM_POLL_SECONDS,
      deliveryTimeoutMs: 10_000,
      leaseSeconds: 60,
    },
    mcpHealth: {
      intervalSeconds: env.MCP_HEALTH_INTERVAL_SECONDS,
      failureThreshold: env.MCP_HEALTH_FAILURE_THRESHOLD,
      // Looked at more often than the interval, so a token is refreshed within its margin.
      pollSeconds: Math.max(1, Math.min(60, env.MCP_HEALTH_INTERVAL_SECONDS)),
      refreshMarginSeconds: 300,
      // Longer than a connection's checks take (probes are bounded at 15 s each, run one at a time per connection).
      leaseSeconds: 900,
      batchSize: 20,
      concurrency: 4,
    },
    messengerDelivery: {
      maxAttempts: env.MESSENGER_DELIVERY_ATTEMPTS,
      retryDelaySeconds: env.MESSENGER_DELIVERY_RETRY_DELAY_SECONDS,
      maxRetryDelaySeconds: env.MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS,
      expireInSeconds: env.MESSENGER_DELIVERY_EXPIRE_SECONDS,
      deliveryTimeoutMs: env.MESSENGER_DELIVERY_TIMEOUT_MS,
      concurrency: env.MESSENGER_DELIVERY_CONCURRENCY,
      pollingIntervalSeconds: env.MESSENGER_DELIVERY_POLL_SECONDS,
    },
  };
}
