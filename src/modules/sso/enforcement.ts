// Requiring SSO (the connection's `ssoRequired`): whose password sign-in the organization refuses. The
// users module asks through the narrow PasswordSignInPolicy the app hands it, so that it never imports
// this module (SSO uses users' accounts: the other way round would be a cycle).
import type { Database } from '../../db/database.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import type { PasswordSignInPolicy } from '../users/index.ts';
import { createSignInStore } from './sign-in-store.ts';

export const emailDomainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * A member of an organization that requires SSO, whose e-mail is in its verified domain, may not use a
 * password; its owner may (break-glass, so that a broken identity provider cannot lock the organization
 * out), and that sign-in is flagged in the organization's log. Anyone else (not a member, another domain) is
 * not the organization's to refuse. The domain is verified for one organization at most, so at most one
 * organization decides.
 */
export function createPasswordSignInPolicy(deps: {
  db: Database;
  membership: Pick<MembershipAuthorization, 'getMemberByUser'>;
}): PasswordSignInPolicy {
  const store = createSignInStore();
  return async (user) => {
    const domain = emailDomainOf(user.email);
    const connection = await store.findByVerifiedDomain(deps.db, domain);
    if (!connection?.sso_required) return { allowed: true };
    const member = await deps.membership.getMemberByUser(connection.organization_id, user.id);
    if (!member) return { allowed: true };
    if (member.role === 'owner') return { allowed: true, breakGlassOrganizationId: connection.organization_id };
    return { allowed: false, organizationId: connection.organization_id, domain };
  };
}
