// SSO: what the app registers of it, and what other modules may use of it (SCIM provisions for the
// organization's verified SSO domain).
import type { RoleGrants } from '../roles/index.ts';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { MembershipAuthorization, MembershipSessions } from '../identity/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import type { TeamDirectory } from '../teams/index.ts';
import type { UserDirectory } from '../users/index.ts';
import { createOidcRelyingParty } from './oidc.ts';
import { createSamlServiceProvider } from './saml.ts';
import { createSamlAcs } from './saml-acs.ts';
import { samlRoutes } from './saml-routes.ts';
import { signInRoutes } from './sign-in-routes.ts';
import { createSignInService } from './sign-in.ts';
import { createTxtResolver } from './dns.ts';
import { ssoRoutes } from './routes.ts';
import { createSsoService } from './service.ts';

export { normalizeDomain } from './dns.ts';
export { createPasswordSignInPolicy } from './enforcement.ts';

/** An organization's SSO connection as other modules see it. */
export interface SsoConnection {
  id: string;
  organization_id: string;
  /** Normalized: lower case, no trailing dot, punycode. */
  domain: string;
  domain_verified_at: Date | null;
}

export interface SsoDirectory {
  /** The organization's SSO connection when its domain is verified; undefined while it has none or it is unverified. */
  verifiedConnection(organizationId: string): Promise<SsoConnection | undefined>;
}

export interface SsoModuleDeps {
  db: Database;
  organizations: Pick<OrganizationDirectory, 'getOrganization'>;
  secrets: SecretBox;
  /** Where the domain's verification record is looked up: DNS_SERVERS (the system's resolvers when empty) and DNS_TIMEOUT_MS. */
  dns: { servers: string[]; timeoutMs: number };
  /** Sign-in: accounts, members and sessions, default teams; requiring SSO ends password sessions. */
  membership: Pick<MembershipAuthorization, 'getMemberByUser' | 'getMemberRemoval' | 'addMember' | 'lockMember'> &
    Pick<
      MembershipSessions,
      'issueSession' | 'markSessionAuthenticated' | 'revokePasswordSessionsInDomain' | 'revokeUserSessions'
    >;
  users: Pick<UserDirectory, 'getUser' | 'findUserByEmail' | 'createUserWithoutPassword'>;
  teams: Pick<TeamDirectory, 'listTeamIds' | 'addMemberToTeams'>;
  /** Whether the caller may give the role SSO's provisioning gives. */
  roleGrants: RoleGrants;
  /** The guarded client: identity providers (OIDC discovery, SAML metadata) are tenant-supplied URLs. */
  outbound: Pick<OutboundClient, 'fetch'>;
  publicUrl: string;
  /**
   * Where a sign-in may send its code (platform/redirect-uris.ts: the console's pages, loopback, orgplane:,
   * SSO_REDIRECT_URIS), SSO_CLOCK_SKEW_SECONDS and SSO_START_ATTEMPTS_PER_ADDRESS.
   */
  signIn: { redirectUriAllowed: (uri: string) => boolean; clockSkewSeconds: number; startAttemptsPerAddress: number };
  /** Starting sign-ins is limited per client address. */
  rateLimiter: RateLimiter;
}

export async function registerSso(app: FastifyInstance, deps: SsoModuleDeps): Promise<SsoDirectory> {
  requireDependencies('sso', deps, [
    'db',
    'organizations',
    'secrets',
    'dns',
    'membership',
    'users',
    'teams',
    'roleGrants',
    'outbound',
    'publicUrl',
    'signIn',
    'rateLimiter',
  ]);
  const sso = createSsoService({ ...deps, resolver: createTxtResolver(deps.dns) });
  const saml = createSamlServiceProvider({
    db: deps.db,
    publicUrl: deps.publicUrl,
    clockSkewSeconds: deps.signIn.clockSkewSeconds,
  });
  await app.register(ssoRoutes, { sso, publicUrl: deps.publicUrl, saml });
  const signIn = createSignInService({
    ...deps,
    oidc: createOidcRelyingParty({
      outbound: deps.outbound,
      secrets: deps.secrets,
      clockSkewSeconds: deps.signIn.clockSkewSeconds,
    }),
    saml,
    redirectUriAllowed: deps.signIn.redirectUriAllowed,
    startAttemptsPerAddress: deps.signIn.startAttemptsPerAddress,
  });
  await app.register(signInRoutes, { signIn });
  await app.register(samlRoutes, { db: deps.db, saml, acs: createSamlAcs({ db: deps.db, saml, signIn }) });
  return sso;
}
// Its sealed columns, re-sealed under the newest key by `orgplane secrets reseal`.
export { ssoSealedColumns } from './sealed-columns.ts';
