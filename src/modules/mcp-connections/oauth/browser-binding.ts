// Binds an authorization to the browser that started it (issue 21 item 6). The start is an API call
// (POST .../oauth/authorize) that answers with the provider's URL, not a redirect: its response is
// the one step of the flow that reaches the starter's browser and nobody else's (the console calls
// it from the page, same origin, so the browser keeps the cookie it sets). It sets an HttpOnly,
// SameSite=Lax cookie, scoped to the MCP connection paths, holding a random nonce; the pending
// authorization keeps only the nonce's SHA-256. The callback is refused unless the browser coming
// back carries that nonce: a shared authorization URL completed in another person's browser stores
// nothing. SameSite=Lax still sends the cookie on the provider's top-level redirect back (a GET).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../../http/errors.ts';

export const BINDING_COOKIE = 'orgplane_mcp_oauth';
const NONCE = /^[A-Za-z0-9_-]{43}$/;

/** The nonce a request's Cookie header carries, when well-formed. */
export function bindingNonceOf(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== BINDING_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (NONCE.test(value)) return value;
  }
  return null;
}

/**
 * The browser's nonce: the one it already carries (several authorizations in progress in one
 * browser, one per tab, share it), else a new one.
 */
export function browserNonce(carried: string | null): string {
  return carried ?? randomBytes(32).toString('base64url');
}

export function bindingHash(nonce: string): string {
  return createHash('sha256').update(nonce, 'ascii').digest('hex');
}

/** Set-Cookie for the nonce, scoped to the paths under PUBLIC_URL that the authorize call and both callbacks share. */
export function bindingCookie(publicUrl: string, nonce: string, maxAgeSeconds: number): string {
  const base = new URL(publicUrl);
  const path = `${base.pathname.replace(/\/+$/, '')}/v1/mcp-connections/`;
  return [`${BINDING_COOKIE}=${nonce}`, `Path=${path}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(base.protocol === 'https:' ? ['Secure'] : [])].join('; ');
}

export const browserMismatch = () =>
  new ApiError(
    403,
    'browser_mismatch',
    'This authorization was started in another browser. Open the link in the browser that started it, or start connecting again from this one; nothing was stored.',
  );

/** Whether the nonce the browser carries is the one the authorization was started with. */
export function sameBrowser(carried: string | null, storedHash: string): boolean {
  if (!carried) return false;
  const given = Buffer.from(bindingHash(carried), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
