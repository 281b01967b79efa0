// Organization API keys: created by owners and admins, shown once, listed and revoked.
import type { RoleGrants } from '../roles/index.ts';
import type { Role } from '../../http/caller.ts';
import type { Database } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import type { PermissionKey } from '../../platform/permissions.ts';

import { idPrefixes, newId } from '../../platform/ids.ts';
import { hashToken, tenantToken } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { apiKeyPrefix, membershipRefusals, type MembershipAuthorization } from '../identity/index.ts';
import * as store from './store.ts';
import { apiKeyErrors } from './error-codes.ts';

const manageKeys: PermissionKey = 'api_keys.manage';

export interface ApiKeyServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember'>;
  /** Whether the caller may give the key's role. */
  roleGrants: RoleGrants;
}

export function createApiKeyService(deps: ApiKeyServiceDeps) {
  const { db, membership } = deps;
  return {
    async createApiKey(
      ctx: CallerContext,
      organizationId: string,
      input: { name: string; role: Role },
      requireFresh: FreshAuthenticationCheck,
    ) {
      const acting = await membership.requireMembership(ctx.actor, organizationId, manageKeys);
      requireFresh();
      const key = tenantToken(apiKeyPrefix, organizationId);
      const keyId = newId(idPrefixes.apiKey);
      const apiKey = await writeTransaction(db, ctx, async (tx) => {
        // A removal, suspension or demotion not committed yet must not leave a working key behind.
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: manageKeys,
          refuse: membershipRefusals(),
        });
        await deps.roleGrants.requireGrantable(tx, organizationId, input.role, acting.permissions);
        tx.audit({
          action: 'api_key.created',
          organizationId,
          target: { type: 'api_key', id: keyId, name: input.name },
          changes: { name: input.name, role: input.role, key: redacted },
        });
        return store.insertApiKey(tx, {
          id: keyId,
          organizationId,
          name: input.name,
          role: input.role,
          keyHash: hashToken(key),
          createdBy: ctx.actor.userId,
        });
      });
      return { apiKey, key };
    },

    async listApiKeys(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await membership.requireMembership(caller, organizationId, manageKeys);
      return store.listApiKeys(db, organizationId, page.limit, page.after);
    },

    async revokeApiKey(
      ctx: CallerContext,
      organizationId: string,
      apiKeyId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      await membership.requireMembership(ctx.actor, organizationId, manageKeys);
      requireFresh();
      const revoked = await writeTransaction(db, ctx, async (tx) => {
        const name = await store.revokeApiKey(tx, organizationId, apiKeyId);
        if (name !== undefined)
          tx.audit({ action: 'api_key.revoked', organizationId, target: { type: 'api_key', id: apiKeyId, name } });
        return name !== undefined;
      });
      if (!revoked) throw apiKeyErrors.api_key_not_found('No such API key');
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
