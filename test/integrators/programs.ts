// Programs an integrator writes against the generated clients: each calls the eight spec'd operations
// and narrows an error by its code. They are only type-checked (clients.test.ts runs tsc on them);
// a `@ts-expect-error` line fails the check if the types stop refusing what they must refuse.

export const openapiFetchProgram = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';

const client = createClient<paths>({ baseUrl: 'http://localhost:8080', headers: { authorization: 'Bearer ops_token' } });
const connectionId = 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6';

export async function all(): Promise<void> {
  // 1. Edit an external MCP connection, and narrow its 409 by code.
  const edited = await client.PUT('/v1/mcp-connections/{connectionId}', {
    params: { path: { connectionId } },
    body: { name: 'n', url: 'https://mcp.example.com', authType: 'none', credentialMode: 'shared', access: { orgWide: true }, expectedUpdatedAt: '2026-01-31T09:30Z' },
  });
  if (edited.error) {
    if (edited.error.error === 'connection_conflict') console.log('stale expectedUpdatedAt');
    // @ts-expect-error not a code this operation answers
    if (edited.error.error === 'no_such_code') console.log('unreachable');
  } else console.log(edited.data.identityChanged);

  // 2. Replace who can use it: defaults may be left out.
  const access = await client.PUT('/v1/mcp-connections/{connectionId}/access', { params: { path: { connectionId } }, body: { access: { memberIds: ['mem_1'] } } });
  if (access.error?.error === 'connection_not_found') console.log('gone');

  // 3. Create an install link (the body may be left out).
  const link = await client.POST('/v1/orgs/{organizationId}/install-links', { params: { path: { organizationId: 'org_1' } } });
  if (link.data) console.log(link.data.installPageUrl);
  if (link.error?.error === 'rate_limited') console.log('later');

  // 4. Create or rotate the SCIM token.
  const scim = await client.POST('/v1/scim/token');
  if (scim.error?.error === 'sso_required') console.log('verify the domain first');
  else if (scim.data) console.log(scim.data.scimToken, scim.data.health.unresolvedFailureCount);

  // 5. Verify the SSO domain.
  const verified = await client.POST('/v1/sso/verify-domain');
  if (verified.error?.error === 'domain_verification_failed') console.log('record not found');

  // 6. Search memories.
  const found = await client.GET('/v1/memory/search', { params: { query: { q: 'deploy' } } });
  for (const result of found.data?.results ?? []) console.log(result.score);

  // 7. Get the active organization.
  const org = await client.GET('/v1/org');
  if (org.error?.error === 'organization_not_found') console.log('none active');
  else if (org.data) console.log(org.data.organization.id);

  // 8. The messaging webhook.
  const hook = await client.POST('/v1/webhooks/messenger/{connectionId}', {
    params: { path: { connectionId } },
    headers: { 'X-Telegram-Bot-Api-Secret-Token': 'secret' },
    body: { update_id: 1 },
  });
  if (hook.error) console.log(hook.error.error);
}
`;

export const heyApiProgram = `
import { client } from './client/client.gen';
import {
  createInstallLink,
  editMcpConnection,
  getActiveOrganization,
  receiveMessengerWebhook,
  replaceMcpConnectionAccess,
  rotateScimToken,
  searchMemories,
  verifySsoDomain,
} from './client/sdk.gen';

client.setConfig({ baseUrl: 'http://localhost:8080', headers: { authorization: 'Bearer ops_token' } });
const connectionId = 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6';

export async function all(): Promise<void> {
  const edited = await editMcpConnection({
    path: { connectionId },
    body: { name: 'n', url: 'https://mcp.example.com', authType: 'none', credentialMode: 'shared', access: { orgWide: true }, expectedUpdatedAt: '2026-01-31T09:30Z' },
  });
  if (edited.error) {
    if (edited.error.error === 'connection_conflict') console.log('stale expectedUpdatedAt');
    // @ts-expect-error not a code this operation answers
    if (edited.error.error === 'no_such_code') console.log('unreachable');
  } else console.log(edited.data?.identityChanged);

  const access = await replaceMcpConnectionAccess({ path: { connectionId }, body: { access: { teamIds: ['team_1'] } } });
  if (access.error?.error === 'connection_not_found') console.log('gone');

  const link = await createInstallLink({ path: { organizationId: 'org_1' } });
  if (link.data) console.log(link.data.installPageUrl);

  const scim = await rotateScimToken();
  if (scim.error?.error === 'sso_required') console.log('verify the domain first');

  const verified = await verifySsoDomain();
  if (verified.error?.error === 'domain_verification_failed') console.log('record not found');

  const found = await searchMemories({ query: { q: 'deploy' } });
  for (const result of found.data?.results ?? []) console.log(result.score);

  const org = await getActiveOrganization();
  if (org.error?.error === 'organization_not_found') console.log('none active');

  const hook = await receiveMessengerWebhook({ path: { connectionId }, headers: { 'X-Telegram-Bot-Api-Secret-Token': 'secret' }, body: { update_id: 1 } });
  if (hook.error) console.log(hook.error);
}
`;
