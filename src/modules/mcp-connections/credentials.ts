// Credentials of API-key connections: the sealed envelope of a key, a key sent with a create or an
// edit, and PUT .../credentials, where a member stores their own key or an admin the shared one.
// (OAuth credentials are written by ./oauth/credential-store.ts; the table is described in service.ts.)
import type { Queryable } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import { forbidden, invalidRequest, missingPermission, notAnActiveMember } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { connectionNotFound, loadVisible, organizationOf } from './access.ts';
import { sealApiKey } from './api-key-envelope.ts';
import type { ConnectionDeps } from './deps.ts';
import { recordCatalog } from './catalog-store.ts';
import { allowProbe, validateByProbe } from './probing.ts';
import { presentAfterWrite } from './view.ts';
import { mcpConnectionErrors } from './error-codes.ts';

export function apiKeyRequired() {
  return invalidRequest([
    {
      message:
        'Required: a shared API-key connection needs its API key (stored keys are dropped when url, authType or credentialMode change)',
      path: ['apiKey'],
      in: 'body',
    },
  ]);
}

/** Stores `apiKey` as the credential of the identity `fingerprint`: shared (memberId null) or that member's own. */
async function storeApiKey(
  deps: Pick<ConnectionDeps, 'store' | 'secrets'>,
  tx: Queryable,
  key: { organizationId: string; connectionId: string; memberId: string | null; fingerprint: string; apiKey: string },
): Promise<void> {
  await deps.store.upsertCredential(tx, {
    id: newId('emcc'),
    organizationId: key.organizationId,
    connectionId: key.connectionId,
    memberId: key.memberId,
    kind: 'apikey',
    identityFingerprint: key.fingerprint,
    secretSealed: sealApiKey(deps.secrets, key.fingerprint, key.apiKey),
    health: 'ready',
  });
}

/** An apiKey sent with a create or an edit becomes the credential of that identity: shared, or the caller's own. */
export async function storeSuppliedApiKey(
  deps: Pick<ConnectionDeps, 'store' | 'secrets'>,
  tx: Queryable,
  organizationId: string,
  connectionId: string,
  memberId: string | null,
  fingerprint: string,
  input: { authType: string; credentialMode: string; apiKey?: string | undefined },
): Promise<void> {
  if (input.authType !== 'apikey' || input.apiKey === undefined) return;
  await storeApiKey(deps, tx, {
    organizationId,
    connectionId,
    memberId: input.credentialMode === 'shared' ? null : memberId,
    fingerprint,
    apiKey: input.apiKey,
  });
}

const sharedKeyNeedsAdmin = () =>
  missingPermission(
    'mcp_connections.manage',
    'Setting the shared API key of a connection needs mcp_connections.manage',
  );

/**
 * The caller supplies their own API key (per-member connections, any member who may use it) or
 * the shared one (shared connections, owners and admins; privileged, so `requireFresh` is asked
 * before the key is probed). Probed before it is stored.
 */
export async function setApiKey(
  deps: ConnectionDeps,
  ctx: CallerContext,
  id: string,
  apiKey: string,
  requireFresh: FreshAuthenticationCheck,
) {
  const caller = ctx.actor;
  const { organizationId, memberId } = organizationOf(caller);
  const row = await loadVisible(deps, caller, id);
  if (row.authType !== 'apikey') {
    throw invalidRequest([
      { message: `This connection authenticates with ${row.authType}, not an API key`, path: ['apiKey'], in: 'body' },
    ]);
  }
  const shared = row.credentialMode === 'shared';
  if (shared && !caller.permissions.has('mcp_connections.manage')) throw sharedKeyNeedsAdmin();
  if (shared) requireFresh();
  if (!shared && !memberId) throw forbidden('A per-member API key belongs to a member of the organization');
  await allowProbe(deps, organizationId, memberId);
  const catalog = await validateByProbe(deps, row.url, 'apikey', row.credentialMode, apiKey);
  await writeTransaction(deps.db, ctx, async (tx) => {
    // The caller may have been removed, suspended or demoted while the key was probed: checked
    // again, and held until the key is stored.
    await deps.members.holdActingMember(tx, organizationId, memberId, {
      ...(shared ? { permission: 'mcp_connections.manage' as const } : {}),
      refuse: { inactive: notAnActiveMember, lacksPermission: sharedKeyNeedsAdmin },
    });
    // The identity may have changed while probing: store the key only for the identity it was checked against.
    const locked = await deps.store.findConnection(tx, organizationId, id, true);
    if (!locked) throw connectionNotFound();
    if (locked.identityFingerprint !== row.identityFingerprint) {
      throw mcpConnectionErrors.connection_conflict(
        'The connection changed while your key was being checked; try again',
      );
    }
    await storeApiKey(deps, tx, {
      organizationId,
      connectionId: id,
      memberId: shared ? null : memberId,
      fingerprint: row.identityFingerprint,
      apiKey,
    });
    tx.audit({
      action: 'mcp_connection.api_key_set',
      organizationId,
      target: { type: 'mcp_connection', id, name: row.name },
      changes: { apiKey: redacted, scope: shared ? 'shared' : 'member' },
    });
  });
  if (catalog) await recordCatalog(deps.db, organizationId, id, row.identityFingerprint, catalog);
  return presentAfterWrite(deps, caller, organizationId, id);
}
