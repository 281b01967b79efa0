// Memory: what the app registers of it, and its background job (deleting expired memories). Other
// modules use nothing of memory.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import type { AppModule } from '../../platform/background.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import { memoryExpiryWorker } from './expiry-worker.ts';
import { memoryRoutes } from './routes.ts';
import { createMemoryService } from './service.ts';

export interface MemoryModuleDeps {
  db: Database;
}

/** How often a process that runs workers looks for expired memories to delete. */
const expiryPollMs = 60_000;

export async function registerMemory(app: FastifyInstance, deps: MemoryModuleDeps): Promise<void> {
  requireDependencies('memory', deps, ['db']);
  await app.register(memoryRoutes, { service: createMemoryService(deps) });
}

export function createMemoryModule(
  deps: MemoryModuleDeps & { log: { info(details: Record<string, unknown>, message: string): void } },
): AppModule {
  requireDependencies('memory', deps, ['db', 'log']);
  return {
    register: (app) => registerMemory(app, deps),
    workers: [memoryExpiryWorker(deps.db, expiryPollMs, deps.log)],
  };
}
