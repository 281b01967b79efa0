// Install links: what the app registers of them. Other modules use nothing of install links.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { MembershipCore } from '../identity/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import { installLinkRoutes } from './routes.ts';
import { createInstallLinkService } from './service.ts';

export interface InstallLinksModuleDeps {
  db: Database;
  membership: Pick<MembershipCore, 'requireMembership' | 'holdActingMember'>;
  organizations: Pick<OrganizationDirectory, 'lockOrganization'>;
  rateLimiter: RateLimiter;
  /** PUBLIC_URL, no trailing slash */
  publicUrl: string;
  /** Where the desktop app is downloaded from (DESKTOP_DOWNLOAD_URL). */
  desktopDownloadUrl: string;
}

export async function registerInstallLinks(app: FastifyInstance, deps: InstallLinksModuleDeps): Promise<void> {
  requireDependencies('install-links', deps, ['db', 'membership', 'organizations', 'rateLimiter', 'publicUrl', 'desktopDownloadUrl']);
  const installLinks = createInstallLinkService(deps);
  await app.register(installLinkRoutes, { installLinks, desktopDownloadUrl: deps.desktopDownloadUrl });
}
