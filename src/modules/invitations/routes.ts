import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { roleErrors } from '../roles/index.ts';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import {
  afterFromCursor,
  commonErrorResponses,
  pageOf,
  paginationQuerySchema,
  errorResponse,
} from '../../http/schemas.ts';
import {
  assignableRoleSchema,
  emailSchema,
  memberSchema,
  organizationNotFoundResponse,
  organizationParams,
  toMember,
} from '../identity/index.ts';
import {
  createdInvitationSchema,
  invitationIdSchema,
  invitationSchema,
  toInvitation,
  toSentInvitation,
} from './schemas.ts';
import type { SentInvitation } from './service.ts';
import type { InvitationService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { invitationErrors } from './error-codes.ts';

const noContent = z.null().describe('No content');

/** A failed e-mail is the operator's to see (the mail server's answer), never the token or link. */
function logDelivery(log: FastifyBaseLogger, sent: SentInvitation): void {
  if (sent.mail.status === 'failed')
    log.warn({ invitationId: sent.invitation.id, reason: sent.mail.reason }, 'invitation e-mail not sent');
}

/** Invitations: send, list, revoke, accept. */
export const invitationRoutes: FastifyPluginAsyncZod<{ invitations: InvitationService }> = async (
  app,
  { invitations },
) => {
  app.post(
    '/v1/orgs/:organizationId/invitations',
    {
      onRequest: authenticate({ requires: 'members.invite', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Invitations'],
        operationId: 'createInvitation',
        summary: 'Invite someone by email (owners and admins)',
        description:
          'The `token` and `acceptUrl` are shown only in this response; the invitation expires after 7 days. Once it is stored, ' +
          'it is e-mailed to the address when SMTP_URL is set (plain text and HTML: the organization, who invited, the role, ' +
          '`acceptUrl`, the expiry); `delivery.email` says what happened. A mail server that refuses or cannot be reached ' +
          'never loses the invitation: it is `failed`, and the link can be passed on by hand or sent again with resendInvitation. An address that belongs to a member ' +
          'of the organization already (active or suspended) is refused with 409 `already_member`, and nothing is stored. ' +
          'An invitation holds only while its sender may invite: removing or suspending them, or making them a plain member, ' +
          'ends the invitations they sent that were not accepted yet (accepting one is then 404 `invitation_not_found`). ' +
          'Owners and admins see the pending ones with listInvitations and end one with revokeInvitation.',
        params: organizationParams,
        body: z.object({ email: emailSchema, role: assignableRoleSchema }),
        response: {
          201: createdInvitationSchema,
          ...commonErrorResponses,
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([httpErrors.organization_not_found, roleErrors.role_not_found]),
          409: errorResponse([invitationErrors.already_member], 'the address belongs to a member of this organization'),
        },
      },
    },
    async (request, reply) => {
      const result = await invitations.createInvitation(
        writeContextOf(request),
        request.params.organizationId,
        request.body,
        freshAuthenticationCheck(request),
      );
      logDelivery(request.log, result);
      return reply.status(201).send(toSentInvitation(result));
    },
  );

  app.post(
    '/v1/orgs/:organizationId/invitations/:invitationId/resend',
    {
      onRequest: authenticate({ requires: 'members.invite', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Invitations'],
        operationId: 'resendInvitation',
        summary: 'Send a pending invitation again, with a new link (owners and admins)',
        description:
          'Gives the invitation a new token and a new expiry (7 days from now) and e-mails it again as createInvitation does; ' +
          'the link sent before stops working (accepting with it is 404 `invitation_not_found`). The new `token` and `acceptUrl` ' +
          'are shown only in this response. The invitation then speaks for the caller: it ends if they may no longer invite ' +
          '(see createInvitation), and the e-mail names them. Only a pending invitation of this organization can be resent: an ' +
          'unknown id, one of another organization, or one already accepted, expired, ended or revoked is 404 ' +
          '`invitation_not_found`; an `invitationId` that is not an invitation id is 400 `invalid_request`.',
        params: organizationParams.extend({ invitationId: invitationIdSchema }),
        response: {
          200: createdInvitationSchema,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, invitationErrors.invitation_not_found], undefined, {
            description:
              'organization_not_found, or invitation_not_found: no pending invitation with this id in this organization',
          }),
        },
      },
    },
    async (request) => {
      const result = await invitations.resendInvitation(
        writeContextOf(request),
        request.params.organizationId,
        request.params.invitationId,
        freshAuthenticationCheck(request),
      );
      logDelivery(request.log, result);
      return toSentInvitation(result);
    },
  );

  app.get(
    '/v1/orgs/:organizationId/invitations',
    {
      onRequest: authenticate({ requires: 'members.invite', judgedBy: 'service' }),
      schema: {
        tags: ['Invitations'],
        operationId: 'listInvitations',
        summary: 'List pending invitations (owners and admins); tokens are never shown again',
        description:
          'Only invitations that can still be accepted: not accepted, not expired, and not ended (revoked, or ended by a change of ' +
          'their sender or invitee, see createInvitation). Newest first; `limit` and `cursor` page as on the other lists, and ' +
          '`nextCursor` (null on the last page) continues with older ones. An invitation that stops being pending between two pages ' +
          'is left out of the later one. Owners and admins, with a session: like creating invitations, not with an API key.',
        params: organizationParams,
        querystring: paginationQuerySchema,
        response: {
          200: z.object({
            invitations: z
              .array(invitationSchema)
              .describe('Pending invitations, newest first; as createInvitation returns them, without the token'),
            nextCursor: z.string().nullable(),
          }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const rows = await invitations.listInvitations(callerOf(request), request.params.organizationId, {
        limit: limit + 1,
        after: afterFromCursor(cursor),
      });
      const page = pageOf(rows, limit);
      return { invitations: page.items.map(toInvitation), nextCursor: page.nextCursor };
    },
  );

  app.delete(
    '/v1/orgs/:organizationId/invitations/:invitationId',
    {
      onRequest: authenticate({ requires: 'members.invite', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Invitations'],
        operationId: 'revokeInvitation',
        summary: 'Revoke a pending invitation (owners and admins)',
        description:
          'Ends the invitation, whoever sent it: its token stops working, and accepting it is then 404 `invitation_not_found`, exactly ' +
          'as for an unknown token; it no longer appears in listInvitations. A membership an invitation already created is not ' +
          'touched (remove the member for that). Only a pending invitation of this organization can be revoked: an unknown id, one of ' +
          'another organization, or one already accepted, expired, ended or revoked is 404 `invitation_not_found` (so revoking twice ' +
          'is 404 the second time, as for API keys); an `invitationId` that is not an invitation id at all (`inv_` and 26 base32 ' +
          "characters) is 400 `invalid_request`. To change an invitation's address or role, revoke it and send a new one.",
        params: organizationParams.extend({ invitationId: invitationIdSchema }),
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, invitationErrors.invitation_not_found], undefined, {
            description:
              'organization_not_found, or invitation_not_found: no pending invitation with this id in this organization',
          }),
        },
      },
    },
    async (request, reply) => {
      await invitations.revokeInvitation(
        writeContextOf(request),
        request.params.organizationId,
        request.params.invitationId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/invitations/:token/accept',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Invitations'],
        operationId: 'acceptInvitation',
        summary: "Accept an invitation sent to the caller's email",
        description:
          'When the accepting session has no usable active organization (none, or one the caller is no longer an active member of), ' +
          'the organization joined becomes its active one; otherwise the active organization is left as it is. ' +
          'Accepting one invitation ends the other pending invitations of the same address to that organization; removing a member ends them too, so only an invitation sent after a removal lets a removed member back in. ' +
          'Removing, suspending or demoting (to member) the one who sent an invitation ends it as well, and so does revoking it (revokeInvitation).',
        params: z.object({ token: z.string().min(1).max(200) }),
        response: {
          200: z.object({ member: memberSchema }),
          ...commonErrorResponses,
          404: errorResponse([invitationErrors.invitation_not_found], 'unknown, used, expired, ended or revoked'),
          409: errorResponse([invitationErrors.already_member]),
        },
      },
    },
    async (request) => {
      const member = await invitations.acceptInvitation(writeContextOf(request), request.params.token);
      return { member: toMember(member) };
    },
  );
};
