// The outbound client's errors (outbound.ts), which its callers tell apart: a refused address, a
// timeout, an answer over its size cap; and the refusals of a URL it will not fetch.

export type OutboundBlockReason =
  | 'private_address'
  | 'redirect_blocked'
  | 'unsupported_protocol'
  | 'too_many_redirects';

export class OutboundBlockedError extends Error {
  readonly reason: OutboundBlockReason;
  /** The refused address, when the reason is an address. */
  readonly address: string | undefined;
  /** The ipaddr.js range name of the refused address (loopback, private, linkLocal...). */
  readonly range: string | undefined;

  constructor(reason: OutboundBlockReason, message: string, details: { address?: string; range?: string } = {}) {
    super(message);
    this.name = 'OutboundBlockedError';
    this.reason = reason;
    this.address = details.address;
    this.range = details.range;
  }
}

export class OutboundTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`The outbound request did not complete within ${timeoutMs} ms`);
    this.name = 'OutboundTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

export class OutboundResponseTooLargeError extends Error {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`The response is larger than ${limitBytes} bytes`);
    this.name = 'OutboundResponseTooLargeError';
    this.limitBytes = limitBytes;
  }
}

/** The first error in `error`'s cause chain that `match` accepts (undici wraps what its connector throws). */
export function findCause(error: unknown, match: (cause: unknown) => boolean): unknown {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth += 1) {
    if (match(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function refuseUnlessHttp(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundBlockedError(
      'unsupported_protocol',
      `Only http and https URLs may be fetched, not ${url.protocol}`,
    );
  }
}

/** The error of a redirect the caller refused (redirect: 'error'), naming only where it led. */
export function refusedRedirect(location: string, from: URL): TypeError {
  return new TypeError(`Redirect to ${safeLocation(location, from)} refused (redirect: 'error')`);
}

function safeLocation(location: string, base: URL): string {
  try {
    const target = new URL(location, base);
    return target.origin;
  } catch {
    return 'an invalid location';
  }
}
