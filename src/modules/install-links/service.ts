import type { Database } from '../../db/database.ts';
import { forbidden, notFound, rateLimited } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { RateLimiter, RateLimitResult } from '../../platform/rate-limiter.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import type { Caller, IdentityService } from '../identity/service.ts';
import { createInstallLinkStore } from './store.ts';

export interface InstallLinkServiceDeps {
  db: Database;
  identity: IdentityService;
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
const tokenPattern = /^opl_[A-Za-z0-9_-]{43}$/;

export interface InstallTarget {
  organizationId: string;
  organizationName: string;
}

export function createInstallLinkService(deps: InstallLinkServiceDeps) {
  const { db } = deps;
  const store = createInstallLinkStore();

  return {
    /**
     * Any member mints a link; only owners and admins may rotate, and a member asking for rotation is
     * refused before anything is written. Rotation revokes every older link in the same transaction.
     */
    async create(caller: Caller, organizationId: string, input: { rotate: boolean }) {
      const membership = await deps.identity.requireMembership(caller, organizationId);
      if (input.rotate && membership.role !== 'owner' && membership.role !== 'admin') {
        throw forbidden('Only owners and admins can rotate install links');
      }
      const limit = await deps.rateLimiter.hit(
        `install-links:create:${membership.memberId ?? caller.apiKeyId ?? caller.userId}`,
        mintLimit.limit,
        mintLimit.windowSeconds,
      );
      if (!limit.allowed) {
        throw rateLimited(limit, `Too many install links created; try again in ${limit.resetSeconds} seconds`);
      }
      const token = tokenPrefix + randomToken(32);
      await db.transaction(async (tx) => {
        if (membership.memberId) {
          // Checked again, held until the link is written: a removal or suspension since the check
          // above (or one in progress) leaves the caller what a non-member gets.
          const member = await deps.identity.lockMember(tx, organizationId, membership.memberId);
          if (member?.status !== 'active') throw notFound('organization_not_found', 'No such organization');
          if (input.rotate && member.role !== 'owner' && member.role !== 'admin') throw forbidden('Only owners and admins can rotate install links');
        }
        if (input.rotate) {
          await store.lockOrganization(tx, organizationId);
          await store.revokeActive(tx, organizationId);
        }
        await store.insert(tx, {
          id: newId('inl'),
          organizationId,
          tokenHash: hashToken(token),
          createdByMemberId: membership.memberId,
          rotation: input.rotate,
        });
      });
      return { token, installPageUrl: `${deps.publicUrl}/install/${token}`, rateLimit: limit };
    },

    /** Counts a public lookup against the client address; the caller decides how to refuse. */
    hitLookupLimit(clientAddress: string): Promise<RateLimitResult> {
      return deps.rateLimiter.hit(`install-links:lookup:${clientAddress}`, lookupLimit.limit, lookupLimit.windowSeconds);
    },

    /** The organization of a valid link; undefined for unknown, malformed or rotated tokens. */
    async resolve(token: string): Promise<InstallTarget | undefined> {
      if (!tokenPattern.test(token)) return undefined;
      const row = await store.findActiveByHash(db, hashToken(token));
      return row ? { organizationId: row.organization_id, organizationName: row.organization_name } : undefined;
    },

    publicUrl: deps.publicUrl,
  };
}

export type InstallLinkService = ReturnType<typeof createInstallLinkService>;
