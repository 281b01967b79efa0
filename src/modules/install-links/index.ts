// Install links: what the app registers of them. Other modules use nothing of install links.
import type { FastifyInstance } from 'fastify';
import { requireDependencies } from '../../platform/dependencies.ts';
import { installLinkRoutes } from './routes.ts';
import { createInstallLinkService, type InstallLinkServiceDeps } from './service.ts';

export interface InstallLinksModuleDeps extends InstallLinkServiceDeps {
  /** Where the desktop app is downloaded from (DESKTOP_DOWNLOAD_URL). */
  desktopDownloadUrl: string;
}

export async function registerInstallLinks(app: FastifyInstance, deps: InstallLinksModuleDeps): Promise<void> {
  requireDependencies('install-links', deps, ['db', 'membership', 'organizations', 'rateLimiter', 'publicUrl', 'desktopDownloadUrl']);
  const installLinks = createInstallLinkService(deps);
  await app.register(installLinkRoutes, { installLinks, desktopDownloadUrl: deps.desktopDownloadUrl });
}
