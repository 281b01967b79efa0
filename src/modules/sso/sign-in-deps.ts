// What the SSO sign-in service is built with (index.ts hands it the other modules' parts it uses).
import type { Database } from '../../db/database.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { MembershipAuthorization, MembershipSessions } from '../identity/index.ts';
import type { TeamDirectory } from '../teams/index.ts';
import type { UserDirectory } from '../users/index.ts';
import type { OidcRelyingParty } from './oidc.ts';
import type { SamlServiceProvider } from './saml.ts';

export interface SignInServiceDeps {
  db: Database;
  secrets: SecretBox;
  oidc: OidcRelyingParty;
  /** A SAML connection's start (the AuthnRequest orgplane sends, and the URL that carries it), and its link opened. */
  saml: Pick<SamlServiceProvider, 'startRequest' | 'openRequest'>;
  membership: Pick<MembershipAuthorization, 'getMemberByUser' | 'getMemberRemoval' | 'addMember' | 'lockMember'> &
    Pick<MembershipSessions, 'issueSession' | 'markSessionAuthenticated' | 'revokeUserSessions'>;
  users: Pick<UserDirectory, 'getUser' | 'findUserByEmail' | 'createUserWithoutPassword'>;
  teams: Pick<TeamDirectory, 'addMemberToTeams'>;
  publicUrl: string;
  /** Where a sign-in may send its code (platform/redirect-uris.ts). */
  redirectUriAllowed: (uri: string) => boolean;
  rateLimiter: RateLimiter;
  /** SSO_START_ATTEMPTS_PER_ADDRESS, per startLimitWindowSeconds. */
  startAttemptsPerAddress: number;
}
