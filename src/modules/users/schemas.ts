import { z } from 'zod';
import { isoTimestamp, timestampSchema } from '../../http/schemas.ts';
import { emailSchema, personNameSchema } from '../identity/index.ts';
import { organizationNameSchema } from '../organizations/index.ts';
import type { UserRow } from './store.ts';

export const passwordSchema = z.string().min(8).max(256);

/** The body of POST /v1/bootstrap, which `orgplane bootstrap` checks its flags with too. */
export const bootstrapBodySchema = z.object({ email: emailSchema, password: passwordSchema, name: personNameSchema, organizationName: organizationNameSchema });

export const userSchema = z
  .object({ id: z.string(), email: z.string(), name: z.string(), image: z.string(), isInstanceAdmin: z.boolean(), createdAt: timestampSchema })
  .meta({ id: 'User' });

export const toUser = (row: UserRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  image: row.image,
  isInstanceAdmin: row.is_instance_admin,
  createdAt: isoTimestamp(row.created_at),
});
