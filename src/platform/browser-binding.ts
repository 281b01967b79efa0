// Binds a flow that leaves for another site and comes back (an MCP OAuth authorization, an SSO sign-in)
// to the browser that started it. The one step of the flow that reaches the starter's browser and
// nobody else's sets an HttpOnly cookie holding a random secret; the flow in progress keeps only the
// secret's SHA-256; the return is refused unless the browser that comes back carries the secret. A
// provider's URL opened, or its answer brought back, in another browser (a link sent to a victim, or
// shared by mistake) then completes nothing.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET = /^[A-Za-z0-9_-]{43}$/;

export interface BrowserBindingCookie {
  /** The cookie's name. */
  name: string;
  /** Its path under PUBLIC_URL's (`/v1/...`): every route of the flow that reads or sets it, and nothing else. */
  path: string;
  /**
   * `lax`: the return is a top-level GET (an OAuth redirect), which SameSite=Lax cookies come with.
   * `none`: the return may be a cross-site POST (a SAML IdP's form), which only SameSite=None cookies come
   * with; browsers take those only when Secure, so over plain http (development) it falls back to Lax.
   */
  sameSite: 'lax' | 'none';
}

/** The secret a request's Cookie header carries in `cookie`, when well-formed. */
export function bindingSecretOf(
  cookieHeader: string | undefined,
  cookie: Pick<BrowserBindingCookie, 'name'>,
): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== cookie.name) continue;
    const value = part.slice(eq + 1).trim();
    if (SECRET.test(value)) return value;
  }
  return null;
}

/** The browser's secret: the one it already carries (several flows in progress in one browser, one per tab, share it), else a new one. */
export function browserSecret(carried: string | null): string {
  return carried ?? randomBytes(32).toString('base64url');
}

export function bindingHash(secret: string): string {
  return createHash('sha256').update(secret, 'ascii').digest('hex');
}

/** Set-Cookie for the secret, HttpOnly, scoped to `cookie.path` under PUBLIC_URL's path; Secure when PUBLIC_URL is https. */
export function bindingCookie(
  cookie: BrowserBindingCookie,
  publicUrl: string,
  secret: string,
  maxAgeSeconds: number,
): string {
  const base = new URL(publicUrl);
  const secure = base.protocol === 'https:';
  const path = `${base.pathname.replace(/\/+$/, '')}${cookie.path}`;
  const sameSite = cookie.sameSite === 'none' && secure ? 'SameSite=None' : 'SameSite=Lax';
  return [
    `${cookie.name}=${secret}`,
    `Path=${path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    sameSite,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** Whether the secret the browser carries is the one whose hash the flow kept (none kept: no browser is). */
export function sameBrowser(carried: string | null, storedHash: string | null): boolean {
  if (!carried || !storedHash) return false;
  const given = Buffer.from(bindingHash(carried), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
