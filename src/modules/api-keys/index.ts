// Organization API keys: how the module joins an app (nothing of it is used by other modules; the
// membership core resolves a presented key).
import type { FastifyInstance } from 'fastify';
import { apiKeyRoutes } from './routes.ts';
import { createApiKeyService, type ApiKeyServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export async function registerApiKeys(app: FastifyInstance, deps: ApiKeyServiceDeps): Promise<void> {
  requireDependencies('api-keys', deps, ['db', 'membership', 'roleGrants']);
  await app.register(apiKeyRoutes, { apiKeys: createApiKeyService(deps) });
}
