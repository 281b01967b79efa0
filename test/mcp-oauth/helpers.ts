// Shared bits of the MCP OAuth tests.
import type { FetchLike } from '../../src/modules/mcp-connections/oauth/errors.ts';

/** Plain fetch for the flow-function tests (the guarded client is exercised by the route tests). */
export const testFetch: FetchLike = (url, init) => fetch(url, init);

/** Follows an authorization URL to the auto-approving server and returns where it redirects. */
export async function followAuthorization(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status !== 302 || !location) throw new Error(`authorization endpoint answered ${response.status}`);
  return new URL(location);
}
