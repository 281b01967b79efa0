import { z } from 'zod';
import { isoTimestamp, timestampSchema } from '../../http/schemas.ts';
import { emailSchema, personNameSchema, roleSchema } from '../identity/index.ts';
import { organizationNameSchema, organizationSchema } from '../organizations/index.ts';
import type { UserRecord } from './contracts.ts';

export const passwordSchema = z.string().min(8).max(256);

/** The body of POST /v1/bootstrap, which `orgplane bootstrap` checks its flags with too. */
export const bootstrapBodySchema = z.object({
  email: emailSchema,
  password: passwordSchema,
  name: personNameSchema,
  organizationName: organizationNameSchema,
});

export const userSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    image: z.string(),
    isInstanceAdmin: z.boolean(),
    createdAt: timestampSchema,
  })
  .meta({ id: 'User' });

/** GET /v1/me: the signed-in user and the organizations they are an active member of. */
export const meSchema = z.object({
  user: userSchema,
  organizations: z.array(organizationSchema.extend({ role: roleSchema, memberId: z.string() })),
  activeOrganizationId: z
    .string()
    .nullable()
    .describe(
      "The session's active organization; null when it has none, or when the user is no longer an active member of it",
    ),
  session: z
    .object({
      authenticatedAt: timestampSchema.describe(
        "When this session's person last authenticated: signed in, or re-authenticated since",
      ),
      authMethod: z
        .enum(['password', 'sso'])
        .describe("How they did: their password, or their organization's identity provider"),
    })
    .describe(
      'How this session was last authenticated; privileged operations need that to be within REAUTH_MAX_AGE_SECONDS',
    ),
});

export const toUser = (row: UserRecord) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  image: row.image,
  isInstanceAdmin: row.is_instance_admin,
  createdAt: isoTimestamp(row.created_at),
});
