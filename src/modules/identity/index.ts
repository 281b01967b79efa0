// The membership core: who the caller is, their roles, and the re-check of an acting member inside a
// write. What other modules may use of it is exported here: its two halves, `MembershipAuthorization`
// and `MembershipSessions` (contracts.ts); they depend on the few functions they call
// (Pick<MembershipAuthorization, ...>), never on identity's store or internals.
export type { Caller } from '../../http/caller.ts';
export {
  sessionOf,
  type MemberInvitations,
  type MemberRecord,
  type MembershipAuthorization,
  type MembershipSessions,
} from './contracts.ts';
export { identityErrors } from './error-codes.ts';
export { membershipRefusals, refusedLikeAuthenticate, type MemberRefusals } from './refusals.ts';
export {
  createMembershipCore,
  requireSignedInUser,
  type MembershipCoreService,
} from './service.ts';
export { sessionTokenLookup, apiKeyPrefix, type TokenBatch } from './tokens.ts';
export { sessionCallerSql, tokenBatchParams, type SessionCallerRow } from './caller-store.ts';
export { eraseOrganizationCopies as eraseIdentityOfOrganization } from './membership-copy-store.ts';
export {
  assignableRoleSchema,
  customRoleIdSchema,
  roleSchema,
  emailSchema,
  memberIdSchema,
  memberSchema,
  organizationIdSchema,
  organizationNotFoundResponse,
  organizationParams,
  personNameSchema,
  toMember,
} from './schemas.ts';
