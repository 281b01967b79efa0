import { environmentSchema } from './config-schema.ts';

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
  /** The plan of each new organization (DEFAULT_PLAN). */
  defaultPlan: 'free' | 'team' | 'enterprise';
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
    defaultPlan: env.DEFAULT_PLAN,
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
