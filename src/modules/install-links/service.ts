import type { Database } from '../../db/database.ts';
import { missingPermission, rateLimited } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { RateLimiter, RateLimitResult } from '../../platform/rate-limiter.ts';
import { hashToken, tenantToken, tokenLookup } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import type { MemberRefusals } from '../identity/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import { createInstallLinkStore } from './store.ts';
import { httpErrors } from '../../http/error-codes.ts';

export interface InstallLinkServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember'>;
  organizations: Pick<OrganizationDirectory, 'lockOrganization'>;
  rateLimiter: RateLimiter;
  /** PUBLIC_URL, no trailing slash */
  publicUrl: string;
}

/** Minting, per member: enough for real use, few enough that a leaked session cannot spray links. */
export const mintLimit = { limit: 20, windowSeconds: 60 * 60 };
/** Public lookups (page and desktop configuration), per client address: slows token guessing. */
export const lookupLimit = { limit: 60, windowSeconds: 60 };

// A recognisable prefix lets secret scanners find leaked links; 32 random bytes = 256 bits.
const tokenPrefix = 'opl_';
// A link names its organization (platform/tokens.ts tenantToken), so its lookup reads one tenant; links
// issued before tokens named their tenant do not, and keep working.
const tokenPattern = /^opl_(?:[a-z]+_[0-9a-z]{26}\.)?[A-Za-z0-9_-]{43}$/;

/** A member removed or suspended since the first check gets what a non-member gets. */
const refusals: MemberRefusals = {
  inactive: () => httpErrors.organization_not_found('No such organization'),
  lacksPermission: missingPermission,
};

export interface InstallTarget {
  organizationId: string;
  organizationName: string;
}

export function createInstallLinkService(deps: InstallLinkServiceDeps) {
  const { db } = deps;
  const store = createInstallLinkStore();

  return {
    /**
     * Holders of install_links.create (every member, by default) mint a link; rotating takes
     * install_links.rotate too, and a caller without it asking for rotation is refused before anything is written. Rotation revokes every older link in the same transaction.
     */
    async create(
      ctx: CallerContext,
      organizationId: string,
      input: { rotate: boolean },
      rule: { beforeRotation?: () => void } = {},
    ) {
      const caller = ctx.actor;
      const membership = await deps.membership.requireMembership(caller, organizationId, 'install_links.create');
      if (input.rotate && !membership.permissions.has('install_links.rotate'))
        throw missingPermission('install_links.rotate');
      // Rotation is privileged (a recent authentication): judged once the caller is known to be allowed to rotate at all.
      if (input.rotate) rule.beforeRotation?.();
      const limit = await deps.rateLimiter.hit(
        `install-links:create:${membership.memberId ?? caller.apiKeyId ?? caller.userId}`,
        mintLimit.limit,
        mintLimit.windowSeconds,
      );
      if (!limit.allowed) {
        throw rateLimited(limit, `Too many install links created; try again in ${limit.resetSeconds} seconds`);
      }
      const token = tenantToken(tokenPrefix, organizationId);
      await writeTransaction(db, ctx, async (tx) => {
        // Checked again, held until the link is written: a removal or suspension since the check
        // above (or one in progress) leaves the caller what a non-member gets.
        await deps.membership.holdActingMember(tx, organizationId, membership.memberId, {
          permission: input.rotate ? 'install_links.rotate' : 'install_links.create',
          refuse: refusals,
        });
        if (input.rotate) {
          // Rotations of one organization run one after another (and after in-flight mints, whose
          // foreign-key check holds a key-share lock on the organization's row): without the row lock
          // two concurrent rotations could both leave their new link valid.
          await deps.organizations.lockOrganization(tx, organizationId);
          await store.revokeActive(tx, organizationId);
        }
        const linkId = newId('inl');
        await store.insert(tx, {
          id: linkId,
          organizationId,
          tokenHash: hashToken(token),
          createdByMemberId: membership.memberId,
          rotation: input.rotate,
        });
        tx.audit({
          action: input.rotate ? 'install_link.rotated' : 'install_link.created',
          organizationId,
          target: { type: 'install_link', id: linkId },
          changes: { token: redacted },
        });
      });
      return { token, installPageUrl: `${deps.publicUrl}/install/${token}`, rateLimit: limit };
    },

    /** Counts a public lookup against the client address; the caller decides how to refuse. */
    hitLookupLimit(clientAddress: string): Promise<RateLimitResult> {
      return deps.rateLimiter.hit(
        `install-links:lookup:${clientAddress}`,
        lookupLimit.limit,
        lookupLimit.windowSeconds,
      );
    },

    /** The organization of a valid link; undefined for unknown, malformed or rotated tokens. */
    async resolve(token: string): Promise<InstallTarget | undefined> {
      if (!tokenPattern.test(token)) return undefined;
      const row = await store.findActiveByToken(db, tokenLookup(token, tokenPrefix));
      return row ? { organizationId: row.organization_id, organizationName: row.organization_name } : undefined;
    },

    publicUrl: deps.publicUrl,
  };
}

export type InstallLinkService = ReturnType<typeof createInstallLinkService>;
