// The sealed envelope of an API-key credential (service.ts describes the table): the key, bound to the
// connection identity it was stored for. Written by credentials.ts, opened by the probe (probing.ts) and
// the health job.
import type { SecretBox } from '../../platform/secrets.ts';

export function sealApiKey(secrets: SecretBox, identityFingerprint: string, apiKey: string): string {
  return secrets.seal(JSON.stringify({ v: 1, kind: 'apikey', identityFingerprint, apiKey }));
}

/** The API key, or null when the credential was obtained for another identity (or is not an API key). */
export function openApiKey(secrets: SecretBox, identityFingerprint: string, sealed: string): string | null {
  try {
    const envelope = JSON.parse(secrets.open(sealed)) as {
      kind?: unknown;
      identityFingerprint?: unknown;
      apiKey?: unknown;
    };
    return envelope.kind === 'apikey' &&
      envelope.identityFingerprint === identityFingerprint &&
      typeof envelope.apiKey === 'string'
      ? envelope.apiKey
      : null;
  } catch {
    return null;
  }
}
