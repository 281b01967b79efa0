// What every signed delivery to a tenant's URL shares (messenger updates, audit-log streams): the
// signature a receiver checks, the backoff between failed attempts, and how a delivery URL is judged
// against the outbound address policy when it is set.
import { createHmac } from 'node:crypto';
import { OutboundBlockedError, type OutboundClient } from './outbound.ts';

export const SIGNATURE_HEADER = 'x-orgplane-signature';

/** `sha256=<hex>`: what a receiver recomputes over the raw body with its secret. */
export function signDelivery(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

export interface BackoffSettings {
  retryDelaySeconds: number;
  maxRetryDelaySeconds: number;
}

/** Seconds before retry number `attempt` (1 after the first failure): doubling, with jitter, capped. */
export function retryDelaySeconds(settings: BackoffSettings, attempt: number): number {
  const base = Math.min(settings.maxRetryDelaySeconds, settings.retryDelaySeconds * 2 ** Math.min(attempt - 1, 30));
  return Math.min(settings.maxRetryDelaySeconds, base * (0.75 + Math.random() * 0.5));
}

/**
 * Whether the URL's host is an address the outbound policy would never dial (private, loopback,
 * metadata...), so the mistake shows when the URL is set rather than as failed deliveries. A name
 * that does not resolve yet passes: DNS may come later, and every delivery is checked again as it connects.
 */
export async function pointsToBlockedAddress(outbound: Pick<OutboundClient, 'resolve'>, url: string): Promise<boolean> {
  try {
    await outbound.resolve(new URL(url).hostname);
    return false;
  } catch (error) {
    return error instanceof OutboundBlockedError;
  }
}

// scheme://user:password@ — up to the authority's last '@', as URL parsers read it.
const userinfoInUrl = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/** An error's text as a tenant may read it (a delivery's last error): any user:password in a quoted URL cut. */
export function tenantVisibleError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.replace(userinfoInUrl, '$1').slice(0, 500);
  return 'unknown error';
}
