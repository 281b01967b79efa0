// What a write answers when, inside its transaction, the acting member turns out to be no longer
// active or no longer holding a key the write needs (holdActingMember). Each route keeps the answers its
// own early check gives, so a caller refused late is told what one refused early is.
import type { ApiError } from '../../http/errors.ts';
import { missingPermission, notAnActiveMember, organizationNotFound } from '../../http/errors.ts';
import type { PermissionKey } from '../../platform/permissions.ts';

export interface MemberRefusals {
  inactive: () => ApiError;
  lacksPermission: (permission: PermissionKey) => ApiError;
}

/** The refusals of a route behind authenticate(): 403 for both. */
export const refusedLikeAuthenticate: MemberRefusals = {
  inactive: notAnActiveMember,
  lacksPermission: missingPermission,
};

/**
 * What requireMembership answers: someone who is not a member learns nothing about the organization
 * (it is simply not found); a member without the key is told which key it takes. The routes that check
 * the caller this way answer a member changed since with these too.
 */
export function membershipRefusals(): MemberRefusals {
  return {
    inactive: () => organizationNotFound('No such organization'),
    lacksPermission: missingPermission,
  };
}
