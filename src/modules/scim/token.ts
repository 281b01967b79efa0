// The SCIM connector: its token (rotated by the organization's owners and admins), its view, and the
// resolution of a bearer token to the connector it stands for.
import { missingPermission, organizationNotFound } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { hashToken, tenantToken, tokenLookup } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { Caller } from '../identity/index.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import type { MemberRefusals } from '../identity/index.ts';
import type { ScimConnector, ScimDeps } from './context.ts';
import { scimErrors } from './error-codes.ts';

const tokenPrefix = 'opscim_';
// A token names its organization (platform/tokens.ts tenantToken), so its lookup reads one tenant; tokens
// issued before tokens named their tenant do not, and keep working.
const tokenPattern = /^opscim_(?:[a-z]+_[0-9a-z]{26}\.)?[A-Za-z0-9_-]{43}$/;
// Who may rotate the token: the roles of the route's check (routes.ts), checked again as it is written.
const manageScim: PermissionKey = 'scim.manage';
/** The route answers a caller who is not an active member 404 organization_not_found (withoutOrganization). */
const rotationRefusals: MemberRefusals = { inactive: organizationNotFound, lacksPermission: missingPermission };

/** Creates the connector when absent, then rotates its token. Needs a verified SSO domain. */
export async function rotateToken(deps: ScimDeps, ctx: CallerContext) {
  const caller = ctx.actor;
  const organizationId = caller.organizationId;
  if (!organizationId) throw organizationNotFound();
  const sso = await deps.sso.verifiedConnection(organizationId);
  if (!sso) {
    throw scimErrors.sso_required(
      'SCIM provisioning needs an SSO connection with a verified domain: PUT /v1/sso/connection, then POST /v1/sso/verify-domain',
    );
  }
  const token = tenantToken(tokenPrefix, organizationId);
  const connector = await writeTransaction(deps.db, ctx, async (tx) => {
    // The route checked the role as the request began; a removal, suspension or demotion committed
    // since must not leave a working token behind. With the member row held, one in progress either
    // commits first and is seen here, or waits until this rotation, made while the right held, commits.
    if (!caller.memberId) throw organizationNotFound();
    await deps.membership.holdActingMember(tx, organizationId, caller.memberId, {
      permission: manageScim,
      refuse: rotationRefusals,
    });
    tx.audit({
      action: 'scim_token.rotated',
      organizationId,
      target: { type: 'scim_connector', id: organizationId },
      changes: { token: redacted },
    });
    return deps.store.upsertConnectorToken(tx, {
      id: newId('scim'),
      organizationId,
      providerId: sso.id,
      tokenHash: hashToken(token),
    });
  });
  return { connector, token, ssoReady: true };
}

export async function getConnection(deps: ScimDeps, caller: Caller) {
  const organizationId = caller.organizationId;
  if (!organizationId) throw organizationNotFound();
  const connector = await deps.store.findConnector(deps.db, organizationId);
  if (!connector)
    throw scimErrors.scim_connection_not_found(
      'This organization has no SCIM connection; create one with POST /v1/scim/token',
    );
  const ssoReady = (await deps.sso.verifiedConnection(organizationId)) !== undefined;
  return { connector, ssoReady };
}

/** The connector a SCIM bearer token stands for; null for a missing, malformed or rotated token. */
export async function authenticate(deps: ScimDeps, token: string | undefined): Promise<ScimConnector | null> {
  if (!token || !tokenPattern.test(token)) return null;
  const connector = await deps.store.findConnectorByToken(deps.db, tokenLookup(token, tokenPrefix));
  return connector ? { organizationId: connector.organization_id, connectorId: connector.id } : null;
}
