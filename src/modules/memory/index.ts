// Memory: what the app registers of it. Other modules use nothing of memory.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import { memoryRoutes } from './routes.ts';
import { createMemoryService } from './service.ts';

export interface MemoryModuleDeps {
  db: Database;
}

export async function registerMemory(app: FastifyInstance, deps: MemoryModuleDeps): Promise<void> {
  requireDependencies('memory', deps, ['db']);
  await app.register(memoryRoutes, { service: createMemoryService(deps) });
}
