// Which account and tenant at the provider a token belongs to, when the provider says so: the claims
// of the ID token in the token response (OpenID Connect), else the fields some providers add to it.
//
// The ID token's signature is not checked: it came straight from the token endpoint over the
// connection this service opened (OpenID Connect Core §3.1.3.7 lets TLS server validation stand in
// for it there), and what is read from it is shown (externalAccountId, tenantId), never used to
// decide who may do what.

export interface ProviderAccount {
  externalAccountId: string | null;
  tenantId: string | null;
}

/** Ids longer than this, or not strings, are ignored rather than stored. */
const MAX_ID_LENGTH = 512;

function id(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH ? value : null;
}

function idTokenClaims(idToken: unknown): Record<string, unknown> {
  if (typeof idToken !== 'string' || idToken.length > 64 * 1024) return {};
  const payload = idToken.split('.')[1];
  if (!payload || !/^[A-Za-z0-9_-]+$/.test(payload)) return {};
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * The account from a token response body: `sub` and `tid` (Microsoft Entra ID's tenant) of its
 * `id_token`, else its `user_id` / `account_id` and `tenant_id` fields; null for what it does not name.
 */
export function providerAccountOf(body: unknown): ProviderAccount {
  const response = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const claims = idTokenClaims(response.id_token);
  return {
    externalAccountId: id(claims.sub) ?? id(response.user_id) ?? id(response.account_id),
    tenantId: id(claims.tid) ?? id(response.tenant_id),
  };
}
