// Who is calling, as http/ and the modules name it: the types live in platform/caller.ts (the write
// context, beneath http/, names the actor too); what resolves a caller from a request's bearer secret
// is http's own.
import type { Caller } from '../platform/caller.ts';

export type { AuthMethod, Caller, Membership, Role } from '../platform/caller.ts';

/**
 * Resolves the bearer secrets authenticate() reads (the membership core implements it; the app
 * decorates itself with one as `callerResolver`). Null when unknown, expired or revoked.
 */
export interface CallerResolver {
  resolveSession(token: string): Promise<Caller | null>;
  resolveApiKey(key: string): Promise<Caller | null>;
}
