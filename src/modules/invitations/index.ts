// Invitations: what ends them when their sender or invitee changes (for the membership core), and how
// the module joins an app.
import type { FastifyInstance } from 'fastify';
import type { MemberInvitations } from '../identity/index.ts';
import { invitationRoutes } from './routes.ts';
import { createInvitationService, invitePermission, type InvitationServiceDeps } from './service.ts';
export { createdInvitationSchema, invitationSchema } from './schemas.ts';
import { expireInvitationsSentBy, expirePendingInvitations } from './store.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

/** What the membership core ends, in a member change's own transaction, when a member may no longer invite or is removed. */
export const memberInvitations: MemberInvitations = {
  invitePermission,
  endInvitationsSentBy: expireInvitationsSentBy,
  endInvitationsTo: expirePendingInvitations,
};

export async function registerInvitations(app: FastifyInstance, deps: InvitationServiceDeps): Promise<void> {
  requireDependencies('invitations', deps, [
    'db',
    'membership',
    'users',
    'organizations',
    'mailer',
    'publicUrl',
    'roleGrants',
  ]);
  await app.register(invitationRoutes, { invitations: createInvitationService(deps) });
}
