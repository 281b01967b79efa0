import { z } from 'zod';
import { isoTimestamp, secretString, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import { assignableRoleSchema } from '../identity/index.ts';
import type { InvitationRow } from './store.ts';

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

/** What createInvitation answers: the invitation and its token, shown only there. */
export const createdInvitationSchema = z.object({
  invitation: invitationSchema,
  token: secretString('Accepts the invitation (POST /v1/invitations/{token}/accept); shown only here'),
});

export const toInvitation = (row: InvitationRow) => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  role: row.role,
  expiresAt: isoTimestamp(row.expires_at),
  createdAt: isoTimestamp(row.created_at),
});
