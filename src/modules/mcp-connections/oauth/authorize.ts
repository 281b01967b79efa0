// The authorization request: PKCE S256 (RFC 7636), the `resource` indicator (RFC 8707), the
// scopes, and the signed `state` built in state.ts.

import { createHash, randomBytes } from 'node:crypto';

export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** RFC 7636 §4.1-4.2: a 43-character verifier from 32 random bytes, its SHA-256 as the challenge. */
export function createPkcePair(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallenge(verifier), method: 'S256' };
}

export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Which scopes to ask for: the connection's configured `requestedScopes` when set; otherwise
 * what the server advertises, in the MCP spec's order (the `scope` of its 401 challenge, then the
 * protected resource metadata's `scopes_supported`); otherwise none (the parameter is left out).
 */
export function selectScopes(input: {
  requested?: string[] | null;
  challengeScope?: string | null;
  resourceScopes?: string[] | null;
}): string[] {
  const clean = (list: string[]) => [...new Set(list.map((s) => s.trim()).filter(Boolean))];
  if (input.requested && input.requested.length > 0) return clean(input.requested);
  if (input.challengeScope) return clean(input.challengeScope.split(/\s+/));
  if (input.resourceScopes && input.resourceScopes.length > 0) return clean(input.resourceScopes);
  return [];
}

/** Adds scopes a server asked for in an `insufficient_scope` challenge (step-up), keeping the old ones. */
export function stepUpScopes(current: string[], challengeScope: string | null | undefined): string[] | null {
  if (!challengeScope) return null;
  const wanted = challengeScope.split(/\s+/).filter(Boolean);
  const merged = [...new Set([...current, ...wanted])];
  return merged.length === current.length ? null : merged;
}

export function buildAuthorizationUrl(input: {
  authorizationEndpoint: string;
  clientId: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  resource: string;
  scopes: string[];
}): string {
  const url = new URL(input.authorizationEndpoint);
  // set() rather than append(): the endpoint's own query may carry parameters, ours must win.
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', input.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('state', input.state);
  url.searchParams.set('code_challenge', input.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('resource', input.resource);
  if (input.scopes.length > 0) url.searchParams.set('scope', input.scopes.join(' '));
  else url.searchParams.delete('scope');
  return url.href;
}
