// Install links: what the app registers of them. Other modules use nothing of install links.
import type { FastifyInstance } from 'fastify';
import { requireDependencies } from '../../platform/dependencies.ts';
import { installLinkRoutes } from './routes.ts';
import { createInstallLinkService, type InstallLinkServiceDeps } from './service.ts';

export interface InstallLinksModuleDeps extends InstallLinkServiceDeps {
  /** Where the desktop app is downloaded from (DESKTOP_DOWNLOAD_URL); null: not configured, and the page says so. */
  desktopDownloadUrl: string | null;
}

export async function registerInstallLinks(app: FastifyInstance, deps: InstallLinksModuleDeps): Promise<void> {
  requireDependencies('install-links', deps, ['db', 'membership', 'organizations', 'rateLimiter', 'publicUrl']);
  if (!deps.desktopDownloadUrl) {
    app.log.warn('DESKTOP_DOWNLOAD_URL is not set: install pages say the desktop app download is not configured');
  }
  const installLinks = createInstallLinkService(deps);
  await app.register(installLinkRoutes, { installLinks, desktopDownloadUrl: deps.desktopDownloadUrl ?? null });
}
