// The guarded outbound HTTP client. Every request orgplane makes to a URL a tenant supplied (MCP
// servers, OAuth servers, the bot platform) goes through here, because a control plane that dials
// URLs for its tenants is the classic SSRF target: cloud metadata, the database, admin ports.
//
// The guard sits where it cannot be raced: in the undici connector, at connect time, on the very
// addresses the socket is about to use. A hostname is resolved once, every address it resolves to
// is checked, and the socket connects only to those checked addresses, so DNS rebinding between a
// "check" and a "connect" is impossible. Literal IP hosts (which skip DNS) are checked in the same
// connector. Redirects are followed here, by hand, so each hop goes through the same connector and
// a hop to a refused address is reported as `redirect_blocked`.

import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { LookupAddress } from 'node:dns';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { createAddressPolicy } from './address-policy.ts';
import { readCapped, wrapResponse } from './outbound-bodies.ts';
import {
  findCause,
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
  refusedRedirect,
  refuseUnlessHttp,
} from './outbound-errors.ts';

export interface OutboundFetchInit extends RequestInit {
  /** Bound on the whole exchange, headers and body (ms). 0 disables it. */
  timeoutMs?: number;
  /** Bound on the response body (bytes); reading past it fails with OutboundResponseTooLargeError. */
  maxResponseBytes?: number;
  /**
   * Request headers that carry a credential besides Authorization (an API key header such as
   * X-Api-Key): dropped, as Authorization, Cookie and Proxy-Authorization always are, when a
   * redirect leaves the origin.
   */
  credentialHeaders?: readonly string[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Usable as the MCP SDK's `fetch` option. */
/** A signed delivery's POST (OutboundClient.post). */
export interface OutboundPostInit {
  headers: Record<string, string>;
  body: string;
  /** Bound on the whole exchange, answer included (ms). 0 disables it. */
  timeoutMs?: number;
  /** Bound on the answer's body (bytes). */
  maxResponseBytes?: number;
}

export interface OutboundPostAnswer {
  status: number;
  /** The answer's body ('' when it could not be read). */
  text: string;
  /** Why the body could not be read whole (over the cap, too slow), after headers that were. */
  readError: Error | null;
}

export interface OutboundClient {
  fetch(url: string | URL, init?: OutboundFetchInit): Promise<Response>;
  /**
   * A POST whose answer is read whole, for signed deliveries: a redirect is refused as an error, not
   * followed. On undici's own request API rather than fetch, which cost four times the CPU per call
   * (bench/webhook/client.ts); the same connector, so the same address policy.
   */
  post(url: string | URL, init: OutboundPostInit): Promise<OutboundPostAnswer>;
  /**
   * Resolves a host name (or takes a literal address) and checks every address against the policy,
   * exactly as a connection would. Throws OutboundBlockedError or the resolver's error (code ENOTFOUND...).
   * For callers that must open their own sockets (the connection probe's TCP/TLS phases): connect only
   * to the addresses returned here.
   */
  resolve(hostname: string): Promise<ResolvedAddress[]>;
  /** Throws OutboundBlockedError when the literal address may not be dialed. */
  checkAddress(address: string): void;
  /** Extra trusted CA certificates this client was given (own TLS checks should trust the same). */
  readonly ca?: string | string[] | undefined;
  close(): Promise<void>;
}

export {
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
} from './outbound-errors.ts';
export { rangeLabel } from './address-ranges.ts';

export interface OutboundClientOptions {
  /** CIDRs that may be dialed although private/loopback/link-local (ALLOWED_PRIVATE_NETWORKS). */
  allowedPrivateNetworks: string[];
  /** Default bound on a whole exchange (ms). */
  timeoutMs?: number;
  /** Default response body cap (bytes). */
  maxResponseBytes?: number;
  maxRedirects?: number;
  /** Resolver; defaults to the system resolver. Tests use it to make a name resolve to any address. */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Extra trusted CA certificates (PEM), for tests that serve HTTPS with their own CA. */
  ca?: string | string[];
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

async function systemLookup(hostname: string): Promise<ResolvedAddress[]> {
  const found = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
}

export function createOutboundClient(options: OutboundClientOptions): OutboundClient {
  const policy = createAddressPolicy(options.allowedPrivateNetworks);
  const resolveName = options.lookup ?? systemLookup;
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const defaultMaxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;

  async function resolve(hostname: string): Promise<ResolvedAddress[]> {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    const literalFamily = isIP(bare);
    if (literalFamily !== 0) {
      policy.check(bare);
      return [{ address: bare, family: literalFamily === 6 ? 6 : 4 }];
    }
    const addresses = await resolveName(bare);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${bare}`), { code: 'ENOTFOUND', hostname: bare });
    }
    // Every address is checked, not just the first: a resolver that answers with one public and one
    // private address must not get a second chance when the first connect fails.
    for (const entry of addresses) policy.check(entry.address);
    return addresses;
  }

  // net/tls.connect call this for host names; its answers are the only addresses they will dial.
  const guardedLookup = (
    hostname: string,
    lookupOptions: { all?: boolean; family?: number } | number,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const wantAll = typeof lookupOptions === 'object' && lookupOptions.all === true;
    resolve(hostname).then(
      (addresses) => {
        if (wantAll) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error, wantAll ? [] : ''),
    );
  };

  const baseConnect = buildConnector({
    lookup: guardedLookup,
    timeout: defaultTimeoutMs,
    // Extra CAs are added to the public roots, not put in their place.
    ...(options.ca ? { ca: [...rootCertificates, ...([] as string[]).concat(options.ca)] } : {}),
  } as buildConnector.BuildOptions);

  const agent = new Agent({
    connect: (connectOptions, callback) => {
      // Literal IPs never reach the lookup above, so they are judged here.
      const host = connectOptions.hostname;
      const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
      if (isIP(bare) !== 0) {
        try {
          policy.check(bare);
        } catch (error) {
          callback(error as Error, null);
          return;
        }
      }
      baseConnect(connectOptions, callback);
    },
  });

  async function fetchOnce(url: URL, init: RequestInit, signal: AbortSignal): Promise<Response> {
    refuseUnlessHttp(url);
    try {
      return (await undiciFetch(url, {
        ...(init as Record<string, unknown>),
        redirect: 'manual',
        signal,
        dispatcher: agent,
      } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    } catch (error) {
      // undici wraps connector errors in "TypeError: fetch failed"; surface our refusal itself.
      const blocked = findCause(error, (cause) => cause instanceof OutboundBlockedError);
      if (blocked) throw blocked;
      throw error;
    }
  }

  async function guardedFetch(input: string | URL, init: OutboundFetchInit = {}): Promise<Response> {
    const {
      timeoutMs = defaultTimeoutMs,
      maxResponseBytes = defaultMaxBytes,
      credentialHeaders = [],
      ...requestInit
    } = init;
    const timeoutController = new AbortController();
    // unref: an unread body must not keep a finished process (the CLI) alive; open sockets still do.
    const timer =
      timeoutMs > 0
        ? setTimeout(() => timeoutController.abort(new OutboundTimeoutError(timeoutMs)), timeoutMs).unref()
        : undefined;
    const signals = [timeoutController.signal, ...(requestInit.signal ? [requestInit.signal] : [])];
    const signal = AbortSignal.any(signals);
    const redirectMode = requestInit.redirect ?? 'follow';

    const fail = (error: unknown): never => {
      if (timer) clearTimeout(timer);
      if (timeoutController.signal.aborted) throw timeoutController.signal.reason;
      throw error;
    };

    let url = new URL(input);
    let method = (requestInit.method ?? 'GET').toUpperCase();
    let body = requestInit.body;
    let headers = new Headers(requestInit.headers as ConstructorParameters<typeof Headers>[0]);
    let response: Response;
    let hops = 0;
    for (;;) {
      try {
        response = await fetchOnce(url, { ...requestInit, method, body, headers }, signal);
      } catch (error) {
        if (hops > 0 && error instanceof OutboundBlockedError && error.reason === 'private_address') {
          fail(
            new OutboundBlockedError(
              'redirect_blocked',
              `A redirect led to a refused address: ${error.message}`,
              error,
            ),
          );
        }
        return fail(error);
      }
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (!location || redirectMode === 'manual') break;
      await response.body?.cancel().catch(() => {});
      if (redirectMode === 'error') fail(refusedRedirect(location, url));
      if (hops >= maxRedirects)
        fail(new OutboundBlockedError('too_many_redirects', `More than ${maxRedirects} redirects`));
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return fail(new TypeError('The redirect location is not a URL'));
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        fail(new OutboundBlockedError('redirect_blocked', `A redirect to a ${next.protocol} URL was refused`));
      }
      // Literal addresses can be judged before dialing, which gives a clearer error.
      const nextHost = next.hostname.replace(/^\[|\]$/g, '');
      if (isIP(nextHost) !== 0) {
        try {
          policy.check(nextHost);
        } catch (error) {
          const blocked = error as OutboundBlockedError;
          fail(
            new OutboundBlockedError(
              'redirect_blocked',
              `A redirect led to a refused address: ${blocked.message}`,
              blocked,
            ),
          );
        }
      }
      // As browsers do: 303 (and 301/302 after a POST) become a body-less GET; credentials do not cross origins.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      if (next.origin !== url.origin) {
        headers = new Headers(headers);
        for (const name of ['authorization', 'cookie', 'proxy-authorization', ...credentialHeaders])
          headers.delete(name);
      }
      url = next;
      hops += 1;
    }

    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxResponseBytes) {
      await response.body?.cancel().catch(() => {});
      fail(new OutboundResponseTooLargeError(maxResponseBytes));
    }
    return wrapResponse(response, url, maxResponseBytes, timer, timeoutController.signal);
  }

  async function post(input: string | URL, init: OutboundPostInit): Promise<OutboundPostAnswer> {
    const url = new URL(input);
    refuseUnlessHttp(url);
    // As fetch does: credentials in a URL are not silently dropped (the sender meant them to be sent).
    if (url.username || url.password)
      throw new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url.href}`);
    const timeoutMs = init.timeoutMs ?? defaultTimeoutMs;
    const maxBytes = init.maxResponseBytes ?? defaultMaxBytes;
    const timeout = new AbortController();
    const timer =
      timeoutMs > 0
        ? setTimeout(() => timeout.abort(new OutboundTimeoutError(timeoutMs)), timeoutMs).unref()
        : undefined;
    try {
      let answer: Dispatcher.ResponseData;
      try {
        answer = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: init.headers,
          body: init.body,
          signal: timeout.signal,
        });
      } catch (error) {
        if (timeout.signal.aborted) throw timeout.signal.reason;
        throw findCause(error, (cause) => cause instanceof OutboundBlockedError) ?? error;
      }
      // A body destroyed unread emits an error: one without a listener would end the process.
      answer.body.on('error', () => {});
      const location = REDIRECT_STATUSES.has(answer.statusCode) ? answer.headers.location : undefined;
      const declared = Number(answer.headers['content-length']);
      if (location || (Number.isFinite(declared) && declared > maxBytes)) {
        answer.body.destroy();
        if (location) throw refusedRedirect(String(location), url);
        throw new OutboundResponseTooLargeError(maxBytes);
      }
      try {
        return { status: answer.statusCode, text: await readCapped(answer.body, maxBytes), readError: null };
      } catch (error) {
        answer.body.destroy();
        return {
          status: answer.statusCode,
          text: '',
          readError: timeout.signal.aborted ? (timeout.signal.reason as Error) : (error as Error),
        };
      }
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  return {
    fetch: guardedFetch,
    post,
    resolve,
    checkAddress: (address) => policy.check(address),
    ca: options.ca,
    close: () => agent.close(),
  };
}
