// DNS TXT lookups for SSO domain verification, and domain normalization.
//
// The resolver talks to the servers named by DNS_SERVERS (the system's resolvers when that list
// is empty). A fresh c-ares channel is made per lookup: c-ares keeps a query cache per channel,
// and an administrator who has just published the record must not be answered from a cache.
import { Resolver } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import { getPublicSuffix } from 'tldts';

export type TxtLookupResult =
  /** The name has TXT records; each record's character-strings are already joined. */
  | { status: 'found'; records: string[] }
  /** Authoritative "nothing there": NXDOMAIN (no such name) or NODATA (name without TXT). */
  | { status: 'missing'; reason: 'nxdomain' | 'nodata' }
  /** The lookup could not be completed (timeout, SERVFAIL, refused, unreachable). */
  | { status: 'failed'; retryable: boolean; code: string };

export interface TxtResolver {
  resolveTxt(name: string): Promise<TxtLookupResult>;
}

export interface TxtResolverOptions {
  /** `host`, `host:port`, `[v6]:port`; empty means the system's resolvers. */
  servers: string[];
  /** Per-attempt timeout in milliseconds. */
  timeoutMs?: number;
  /** Attempts per server. */
  tries?: number;
}

// c-ares error codes that mean "the record is not there" versus "we could not ask".
const MISSING_CODES: Record<string, 'nxdomain' | 'nodata'> = {
  ENOTFOUND: 'nxdomain',
  ENODATA: 'nodata',
};
// Failures that say nothing about the record and are worth retrying later.
const RETRYABLE_CODES = new Set([
  'ETIMEOUT',
  'ESERVFAIL',
  'ECONNREFUSED',
  'EREFUSED',
  'ECANCELLED',
  'EDESTRUCTION',
  'ENOMEM',
  'EFILE',
  'EEOF',
  'EBADRESP',
  'ECONNRESET',
]);

/**
 * A TXT record's RDATA is one or more <character-string>s (RFC 1035 3.3.14). Records longer than
 * 255 octets are split across several strings, and their consumers join them with nothing in
 * between (RFC 7208 3.3 states it for SPF; DKIM and verification tokens follow the same rule).
 */
export function joinTxtChunks(chunks: readonly string[]): string {
  return chunks.join('');
}

export function createTxtResolver(options: TxtResolverOptions): TxtResolver {
  const timeout = options.timeoutMs ?? 2500;
  const tries = options.tries ?? 2;
  const servers = options.servers.filter((s) => s.trim() !== '');
  return {
    async resolveTxt(name) {
      const resolver = new Resolver({ timeout, tries });
      if (servers.length > 0) resolver.setServers(servers);
      try {
        const records = await resolver.resolveTxt(name);
        if (records.length === 0) return { status: 'missing', reason: 'nodata' };
        return { status: 'found', records: records.map(joinTxtChunks) };
      } catch (error) {
        const code =
          typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'EUNKNOWN';
        const missing = MISSING_CODES[code];
        if (missing) return { status: 'missing', reason: missing };
        return { status: 'failed', retryable: RETRYABLE_CODES.has(code), code };
      } finally {
        resolver.cancel();
      }
    },
  };
}

/** What a failed lookup code means, for messages shown to administrators. */
export function describeDnsFailure(code: string): string {
  switch (code) {
    case 'ETIMEOUT':
      return 'the DNS server did not answer in time';
    case 'ESERVFAIL':
      return 'the DNS server answered SERVFAIL';
    case 'EREFUSED':
      return 'the DNS server refused the query';
    case 'ECONNREFUSED':
      return 'the DNS server could not be reached';
    default:
      return `the DNS lookup failed (${code})`;
  }
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The longest name DNS can carry, in its text form without the final dot (RFC 1035 2.3.4). */
export const MAX_DNS_NAME_LENGTH = 253;

// domainToASCII parses its input as a URL's host: it drops a path, query or fragment
// ("zz.test/evil" is "zz.test"), removes tabs, decodes %-escapes and reads "0x7f.1" as an IPv4
// address. So the only ASCII it is given is what a domain name is made of; other characters are
// IDNA's to map, and those that map to a delimiter make it fail instead.
const FORBIDDEN_ASCII = /[^a-z0-9.\-\P{ASCII}]/iu;

/**
 * Normalizes a domain as people type it: surrounding space, letter case, one trailing dot, and
 * internationalized labels (to their punycode A-label form, so "Bücher.example" and
 * "xn--bcher-kva.example" are the same domain). Returns null for anything that is not a bare,
 * registrable-looking host name with at least two labels (no scheme, path, query, user or port; no
 * IP addresses, no wildcards).
 */
export function normalizeDomain(input: string): string | null {
  let value = input.trim();
  if (value.endsWith('.')) value = value.slice(0, -1);
  if (value === '' || value.length > MAX_DNS_NAME_LENGTH * 4) return null;
  if (FORBIDDEN_ASCII.test(value)) return null;
  // domainToASCII lowercases, maps full-width dots and applies IDNA/UTS #46; '' means invalid.
  const ascii = domainToASCII(value);
  if (ascii === '' || ascii.length > MAX_DNS_NAME_LENGTH) return null;
  const labels = ascii.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((label) => LABEL.test(label))) return null;
  // The last label of a real domain is never all digits; this also refuses IPv4 literals.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

/**
 * Whether a normalized domain is itself a public suffix ("co.uk", "github.io"): one under which
 * unrelated parties hold names, so no one organization can stand for it. Per the Public Suffix
 * List, its private section included; a name below a suffix ("example.co.uk") is not one.
 */
export function isPublicSuffix(domain: string): boolean {
  return getPublicSuffix(domain, { allowPrivateDomains: true, extractHostname: false }) === domain;
}
