// What a write answers when, inside its transaction, the acting member turns out to be no longer
// active or no longer in a role the write needs (holdActingMember). Each route keeps the answers its
// own early check gives, so a caller refused late is told what one refused early is.
import type { Role } from '../../http/caller.ts';
import type { ApiError } from '../../http/errors.ts';
import { forbidden, lacksRole, notAnActiveMember, organizationNotFound } from '../../http/errors.ts';

export interface MemberRefusals {
  inactive: () => ApiError;
  lacksRole: () => ApiError;
}

/** The refusals of a route behind authenticate(): 403 for both. */
export const refusedLikeAuthenticate = (roles: readonly string[] = []): MemberRefusals => ({
  inactive: notAnActiveMember,
  lacksRole: () => lacksRole(roles),
});

/**
 * What requireMembership answers: someone who is not a member learns nothing about the organization
 * (it is simply not found); a member without one of `roles` is told which roles it takes. The routes
 * that check the caller this way answer a member changed since with these too.
 */
export function membershipRefusals(roles: readonly Role[] = []): MemberRefusals {
  return {
    inactive: () => organizationNotFound('No such organization'),
    lacksRole: () => forbidden(`This needs the role ${roles.join(' or ')}`),
  };
}
