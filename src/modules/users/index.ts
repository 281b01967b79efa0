// User accounts (sign-up, sign-in, sign-out, GET /v1/me, bootstrap): what other modules may use of
// them, and how the module joins an app. Sessions themselves are the membership core's.
import type { FastifyInstance } from 'fastify';
import { createDesktopSignIn, type DesktopSignInDeps } from './desktop-sign-in.ts';
import { desktopSignInRoutes } from './desktop-sign-in-routes.ts';
import { userRoutes } from './routes.ts';
import { createUserService, type UserService, type UserServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export type { PasswordSignInPolicy, UserDirectory, UserRecord } from './contracts.ts';
export { createUserDirectory, createUserService, type UserService, type UserServiceDeps } from './service.ts';
export { bootstrapBodySchema, meSchema, toUser, userSchema } from './schemas.ts';

/** Registers bootstrap, sign-up/in/out, the desktop app's sign-in and GET /v1/me; the service is returned for the CLI. */
export async function registerUsers(
  app: FastifyInstance,
  deps: UserServiceDeps & Pick<DesktopSignInDeps, 'redirectUriAllowed'>,
): Promise<UserService> {
  requireDependencies('users', deps, [
    'db',
    'rateLimiter',
    'signUpEnabled',
    'signUpAttemptsPerAddress',
    'membership',
    'organizations',
    'passwordSignInPolicy',
    'redirectUriAllowed',
  ]);
  const users = createUserService(deps);
  await app.register(userRoutes, { users });
  await app.register(desktopSignInRoutes, { desktopSignIn: createDesktopSignIn(deps) });
  return users;
}
