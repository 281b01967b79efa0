// Step 1 of discovery (discovery.ts): an MCP request, and the Bearer challenge of its answer's
// `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1).
import { requestFailure, type FetchLike } from './errors.ts';

export const MCP_PROTOCOL_VERSION = '2025-11-25';

export interface BearerChallenge {
  resourceMetadataUrl?: string;
  scope?: string;
  error?: string;
}

/**
 * Reads the Bearer challenge of a `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1).
 * Handles several challenges in one header, quoted strings with escapes and unquoted tokens.
 */
export function parseWwwAuthenticate(header: string | null | undefined): BearerChallenge | null {
  if (!header) return null;
  const s = header;
  let i = 0;
  let inBearer = false;
  let found = false;
  const params: Record<string, string> = {};
  const skipSpaces = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  while (i < s.length) {
    skipSpaces();
    if (s[i] === ',') {
      i++;
      continue;
    }
    const start = i;
    while (i < s.length && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(s[i]!)) i++;
    const token = s.slice(start, i);
    if (!token) {
      i++; // not a token character: skip it rather than loop forever
      continue;
    }
    skipSpaces();
    if (s[i] === '=') {
      // auth-param: token = ( token / quoted-string )
      i++;
      skipSpaces();
      let value = '';
      if (s[i] === '"') {
        i++;
        while (i < s.length && s[i] !== '"') {
          if (s[i] === '\\' && i + 1 < s.length) i++;
          value += s[i];
          i++;
        }
        i++;
      } else {
        const vs = i;
        while (i < s.length && s[i] !== ',' && s[i] !== ' ' && s[i] !== '\t') i++;
        value = s.slice(vs, i);
      }
      if (inBearer) {
        const key = token.toLowerCase();
        if (!(key in params)) params[key] = value;
      }
    } else {
      // a new challenge (auth-scheme); a token68 after a scheme is ignored
      inBearer = token.toLowerCase() === 'bearer';
      if (inBearer) found = true;
    }
  }
  if (!found) return null;
  const out: BearerChallenge = {};
  if (params.resource_metadata) out.resourceMetadataUrl = params.resource_metadata;
  if (params.scope) out.scope = params.scope;
  if (params.error) out.error = params.error;
  return out;
}

/**
 * Step 1: an unauthenticated MCP request, to read the server's challenge. A server that answers
 * without asking for a token returns null (nothing to discover from the challenge).
 */
export async function requestChallenge(serverUrl: string | URL, fetchFn: FetchLike): Promise<BearerChallenge | null> {
  const { status, challenge } = await resourceChallenge(serverUrl, null, fetchFn);
  return status === 401 || status === 403 ? challenge : null;
}

/**
 * One MCP initialize request, with or without a token, for what the server says about it: the
 * status and its Bearer challenge (a 401 to read discovery hints from, or a 403 insufficient_scope
 * naming the scopes it wants).
 */
export async function resourceChallenge(
  serverUrl: string | URL,
  accessToken: string | null,
  fetchFn: FetchLike,
): Promise<{ status: number; challenge: BearerChallenge | null }> {
  let response: Response;
  try {
    response = await fetchFn(new URL(serverUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MCP_PROTOCOL_VERSION,
        ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: MCP_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'orgplane', version: '0.1.0' },
        },
      }),
    });
  } catch (error) {
    throw requestFailure('AUTH_RESOURCE_DISCOVERY', 'Could not reach the MCP server', error);
  }
  await response.body?.cancel().catch(() => {});
  return { status: response.status, challenge: parseWwwAuthenticate(response.headers.get('www-authenticate')) };
}
