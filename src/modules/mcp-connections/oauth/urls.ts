// The URLs orgplane publishes for OAuth, all under PUBLIC_URL, and the client ID metadata
// document that the client-metadata registration points authorization servers to.

import type { CallbackMode } from './state.ts';

function base(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/** shared-v1: one callback URL for every connection. */
export function sharedCallbackUrl(publicUrl: string): string {
  return `${base(publicUrl)}/v1/mcp-connections/oauth/callback`;
}

/** isolated-v1: one callback URL per connection. */
export function isolatedCallbackUrl(publicUrl: string, connectionId: string): string {
  return `${base(publicUrl)}/v1/mcp-connections/${encodeURIComponent(connectionId)}/oauth/callback`;
}

export function clientMetadataUrl(publicUrl: string): string {
  return `${base(publicUrl)}/oauth/client-metadata.json`;
}

export function callbackUrl(publicUrl: string, connectionId: string, mode: CallbackMode): string {
  return mode === 'shared-v1' ? sharedCallbackUrl(publicUrl) : isolatedCallbackUrl(publicUrl, connectionId);
}

/**
 * A client ID metadata document is one document for the whole instance, so it can only list the
 * shared callback: connections registered that way use shared-v1. Pre-registered and dynamically
 * registered clients are registered per connection and use the isolated callback.
 */
export function callbackModeFor(source: 'pre-registered' | 'client-metadata' | 'dynamic' | null): CallbackMode {
  return source === 'client-metadata' ? 'shared-v1' : 'isolated-v1';
}

/** The document served at GET /oauth/client-metadata.json (draft-ietf-oauth-client-id-metadata-document). */
export function clientMetadataDocument(publicUrl: string): Record<string, unknown> {
  return {
    client_id: clientMetadataUrl(publicUrl),
    client_name: 'orgplane',
    client_uri: base(publicUrl),
    redirect_uris: [sharedCallbackUrl(publicUrl)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}
