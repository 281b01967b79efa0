// Shared bits of the MCP OAuth tests.
import { createOutboundClient } from '../../src/platform/outbound.ts';
import type { FetchLike } from '../../src/modules/mcp-connections/oauth/errors.ts';

/** The guarded outbound client, allowed to reach loopback where the test servers listen. */
const outbound = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] });
export const testFetch: FetchLike = (url, init) => outbound.fetch(url, init);

/** The same client with the production policy: loopback refused. */
const strict = createOutboundClient({ allowedPrivateNetworks: [] });
export const strictFetch: FetchLike = (url, init) => strict.fetch(url, init);

/** Follows an authorization URL to the auto-approving server and returns where it redirects. */
export async function followAuthorization(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status !== 302 || !location) throw new Error(`authorization endpoint answered ${response.status}`);
  return new URL(location);
}
