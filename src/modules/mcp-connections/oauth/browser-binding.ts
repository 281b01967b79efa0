// Binds an authorization to the browser that started it (platform/browser-binding.ts). The start is an
// API call (POST .../oauth/authorize) that answers with the provider's URL, not a redirect: its response
// is the one step of the flow that reaches the starter's browser and nobody else's (the console calls
// it from the page, same origin, so the browser keeps the cookie it sets). The cookie is SameSite=Lax,
// scoped to the MCP connection paths: Lax still sends it on the provider's top-level redirect back (a GET).
import {
  bindingCookie as cookieFor,
  bindingSecretOf,
  type BrowserBindingCookie,
} from '../../../platform/browser-binding.ts';
import { mcpConnectionErrors } from '../error-codes.ts';

export { bindingHash, browserSecret as browserNonce, sameBrowser } from '../../../platform/browser-binding.ts';

export const BINDING_COOKIE = 'orgplane_mcp_oauth';
const cookie: BrowserBindingCookie = { name: BINDING_COOKIE, path: '/v1/mcp-connections/', sameSite: 'lax' };

/** The nonce a request's Cookie header carries, when well-formed. */
export function bindingNonceOf(cookieHeader: string | undefined): string | null {
  return bindingSecretOf(cookieHeader, cookie);
}

/** Set-Cookie for the nonce, scoped to the paths under PUBLIC_URL that the authorize call and both callbacks share. */
export function bindingCookie(publicUrl: string, nonce: string, maxAgeSeconds: number): string {
  return cookieFor(cookie, publicUrl, nonce, maxAgeSeconds);
}

export const browserMismatch = () =>
  mcpConnectionErrors.browser_mismatch(
    'This authorization was started in another browser. Open the link in the browser that started it, or start connecting again from this one; nothing was stored.',
  );
