// The spec's identity of a connection: the server (normalized URL), how it authenticates, and whose
// credential it uses. A credential counts only for the identity it was obtained for.
import { createHash } from 'node:crypto';
import type { AuthType, CredentialMode } from './contracts.ts';

/** The spec's identity of a connection: the server (normalized URL), how it authenticates, and whose credential it uses. */
export function normalizeUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}

export function identityFingerprint(normalizedUrl: string, authType: AuthType, credentialMode: CredentialMode): string {
  return createHash('sha256')
    .update(JSON.stringify([normalizedUrl, authType, credentialMode]))
    .digest('hex');
}

/** The identity columns of a connection to `url` (the URL as given is stored; the normalized one identifies it). */
export function connectionIdentity(url: string, authType: AuthType, credentialMode: CredentialMode) {
  const normalizedUrl = normalizeUrl(url);
  return {
    url,
    normalizedUrl,
    authType,
    credentialMode,
    identityFingerprint: identityFingerprint(normalizedUrl, authType, credentialMode),
  };
}
