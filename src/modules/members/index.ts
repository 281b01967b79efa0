// The member routes of an organization (the members table and the member changes other modules make
// are the membership core's, ../identity): how the module joins an app.
import type { FastifyInstance } from 'fastify';
import { memberRoutes } from './routes.ts';
import { createMemberService, type MemberServiceDeps } from './service.ts';

export type { MemberRemovalHook } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export async function registerMembers(app: FastifyInstance, deps: MemberServiceDeps): Promise<void> {
  requireDependencies('members', deps, ['membership', 'roleGrants']);
  await app.register(memberRoutes, { members: createMemberService(deps) });
}
