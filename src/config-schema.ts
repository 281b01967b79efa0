import { Resolver } from 'node:dns';
import { isIP } from 'node:net';
import { z } from 'zod';

// How each environment variable is checked and turned into its value; src/config.ts shapes the result
// into Config, and src/config-variables.ts holds each variable's help text.
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

export const environmentSchema = z
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
    DEFAULT_PLAN: z
      .enum(['free', 'team', 'enterprise'], { error: 'must be one of free, team, enterprise' })
      .default('free'),
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
