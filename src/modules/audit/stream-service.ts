// An organization's audit-log stream: setting it (owners and admins; the signing secret is generated
// here, shown once, stored sealed), reading its delivery state, removing it. Delivery is in stream-worker.ts.
import type { Database } from '../../db/database.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import { invalidRequest } from '../../http/errors.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { pointsToBlockedAddress } from '../../platform/signed-delivery.ts';
import { randomToken } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { membershipRefusals, type MembershipAuthorization } from '../identity/index.ts';
import * as streams from './stream-store.ts';
import { auditErrors } from './error-codes.ts';

const manageStream: PermissionKey = 'audit_stream.manage';

export interface AuditStreamServiceDeps {
  db: Database;
  secrets: SecretBox;
  outbound: Pick<OutboundClient, 'resolve'>;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember'>;
}

export const streamNotFound = () => auditErrors.audit_stream_not_found('This organization has no audit-log stream');

export function createAuditStreamService(deps: AuditStreamServiceDeps) {
  const { db, secrets, membership } = deps;
  return {
    /**
     * Creates the stream (starting after the newest event: the first one sent is this change's own
     * event) or changes it. Returns the signing secret when one was generated: on creation, or when
     * `rotateSecret` asks for a new one.
     */
    async putStream(
      ctx: CallerContext,
      organizationId: string,
      input: { url: string; enabled: boolean; rotateSecret?: boolean | undefined },
      requireFresh: FreshAuthenticationCheck,
    ): Promise<{ stream: streams.StreamView; signingSecret: string | null }> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, manageStream);
      requireFresh();
      if (await pointsToBlockedAddress(deps.outbound, input.url)) {
        throw invalidRequest([
          { message: 'The URL points to an address outbound calls may not reach', path: ['url'], in: 'body' },
        ]);
      }
      const signingSecret = await writeTransaction(db, ctx, async (tx) => {
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: manageStream,
          refuse: membershipRefusals(),
        });
        // Two first PUTs at once take turns, so the second changes the stream the first created.
        await lockUntilCommit(tx, `audit-stream:${organizationId}`);
        const existing = await streams.lockStream(tx, organizationId);
        const secret = !existing || input.rotateSecret ? randomToken(32) : null;
        const sealed = secret === null ? null : secrets.seal(secret);
        if (existing) {
          await streams.updateStream(tx, organizationId, {
            url: input.url,
            enabled: input.enabled,
            signingSecretSealed: sealed,
          });
        } else {
          const cursorSeq = await streams.chainHead(tx, organizationId);
          await streams.insertStream(tx, {
            organizationId,
            url: input.url,
            signingSecretSealed: sealed!,
            enabled: input.enabled,
            cursorSeq,
          });
        }
        tx.audit({
          action: existing ? 'audit_stream.updated' : 'audit_stream.created',
          organizationId,
          target: { type: 'audit_stream', id: organizationId },
          changes: { url: input.url, enabled: input.enabled, ...(secret === null ? {} : { signingSecret: redacted }) },
        });
        return secret;
      });
      const stream = await streams.findStream(db, organizationId);
      if (!stream) throw streamNotFound();
      return { stream, signingSecret };
    },

    async getStream(caller: Caller, organizationId: string): Promise<streams.StreamView> {
      await membership.requireMembership(caller, organizationId, manageStream);
      const stream = await streams.findStream(db, organizationId);
      if (!stream) throw streamNotFound();
      return stream;
    },

    async deleteStream(
      ctx: CallerContext,
      organizationId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, manageStream);
      requireFresh();
      const deleted = await writeTransaction(db, ctx, async (tx) => {
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: manageStream,
          refuse: membershipRefusals(),
        });
        const done = await streams.deleteStream(tx, organizationId);
        if (done)
          tx.audit({
            action: 'audit_stream.deleted',
            organizationId,
            target: { type: 'audit_stream', id: organizationId },
          });
        return done;
      });
      if (!deleted) throw streamNotFound();
    },
  };
}

export type AuditStreamService = ReturnType<typeof createAuditStreamService>;
