// SSO: what the app registers of it, and what other modules may use of it (SCIM provisions for the
// organization's verified SSO domain).
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import { createTxtResolver } from './dns.ts';
import { ssoRoutes } from './routes.ts';
import { createSsoService } from './service.ts';

export { normalizeDomain } from './dns.ts';

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
}

export async function registerSso(app: FastifyInstance, deps: SsoModuleDeps): Promise<SsoDirectory> {
  requireDependencies('sso', deps, ['db', 'organizations', 'secrets', 'dns']);
  const sso = createSsoService({ ...deps, resolver: createTxtResolver(deps.dns) });
  await app.register(ssoRoutes, { sso });
  return sso;
}
