import { z } from 'zod';
import { isoTimestamp, secretString, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import { assignableRoleSchema } from '../identity/index.ts';
import type { InvitationRow } from './store.ts';
import type { SentInvitation } from './service.ts';

export const invitationIdSchema = typeIdSchema('inv');

export const invitationSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    email: z.string(),
    role: assignableRoleSchema,
    expiresAt: timestampSchema,
    createdAt: timestampSchema,
  })
  .meta({ id: 'Invitation' });

/** What createInvitation and resendInvitation answer: the invitation, its token and link, shown only there, and its e-mail. */
export const createdInvitationSchema = z.object({
  invitation: invitationSchema,
  token: secretString('Accepts the invitation (POST /v1/invitations/{token}/accept); shown only here'),
  acceptUrl: secretString(
    "The console page that accepts the invitation, the token in the link's fragment (`PUBLIC_URL/invitations/accept#token=...&email=...`): " +
      'what the e-mail carries, to copy and pass on when it was not sent; shown only here',
  ),
  delivery: z
    .object({
      email: z
        .enum(['sent', 'not_configured', 'failed'])
        .describe(
          '`sent`: the mail server took the message; `not_configured`: no SMTP_URL, nothing was sent; `failed`: the mail ' +
            'server refused or could not be reached (the invitation stands; pass acceptUrl on, or resend)',
        ),
    })
    .describe('What became of the invitation e-mail, sent once the invitation was stored'),
});

export const toSentInvitation = (sent: SentInvitation) => ({
  invitation: toInvitation(sent.invitation),
  token: sent.token,
  acceptUrl: sent.acceptUrl,
  delivery: { email: sent.mail.status },
});

export const toInvitation = (row: InvitationRow) => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  role: row.role,
  expiresAt: isoTimestamp(row.expires_at),
  createdAt: isoTimestamp(row.created_at),
});
