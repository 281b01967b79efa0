// SCIM: what the app registers of it (the management routes under /v1/scim and the SCIM 2.0 server
// under /scim/v2). Other modules use nothing of SCIM.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { SsoDirectory } from '../sso/index.ts';
import type { ScimDeps } from './context.ts';
import { scimManagementRoutes } from './routes.ts';
import { scimServerRoutes } from './server.ts';
import { createScimService } from './service.ts';
import { createScimStore } from './store.ts';

export { scimFrameworkError, scimPreRoutingError } from './wire.ts';

/** Where the SCIM 2.0 server is served. */
export const SCIM_PREFIX = '/scim/v2';

export interface ScimModuleDeps {
  db: Database;
  membership: ScimDeps['membership'];
  users: ScimDeps['users'];
  /** Provisioning follows the organization's verified SSO domain. */
  sso: SsoDirectory;
  /** PUBLIC_URL, no trailing slash */
  publicUrl: string;
  removalHooks?: ScimDeps['removalHooks'];
}

export async function registerScim(app: FastifyInstance, deps: ScimModuleDeps): Promise<void> {
  requireDependencies('scim', deps, ['db', 'membership', 'users', 'sso', 'publicUrl']);
  const scim = createScimService({
    db: deps.db,
    store: createScimStore(),
    membership: deps.membership,
    users: deps.users,
    sso: deps.sso,
    baseUrl: `${deps.publicUrl}${SCIM_PREFIX}`,
    removalHooks: deps.removalHooks,
  });
  await app.register(scimManagementRoutes, { scim });
  await app.register(scimServerRoutes, { scim, prefix: SCIM_PREFIX, documentationUri: `${deps.publicUrl}/docs` });
}
