// What the connections service is built from. Each function of the service's files takes the few
// of these it uses (Pick<ConnectionDeps, ...>), so what a step depends on is read from its signature.
import type { Database, Queryable } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import type { ConnectionOAuthHooks } from './contracts.ts';
import type { ConnectionStore } from './store.ts';

/** The teams side of the organization: which of `ids` are its teams. */
export interface TeamDirectory {
  listTeamIds(organizationId: string, ids: string[], tx?: Queryable): Promise<string[]>;
}

export interface ConnectionDeps {
  db: Database;
  store: ConnectionStore;
  secrets: SecretBox;
  outbound: OutboundClient;
  members: Pick<MembershipAuthorization, 'holdActingMember' | 'lockMemberIds' | 'listMemberIds'>;
  teams: TeamDirectory;
  publicUrl: string;
  /** Bounds the probes a tenant and a member can start (probing.ts probeLimits). */
  limiter: RateLimiter;
  oauth: ConnectionOAuthHooks;
  /** Receives probe failures with their full detail, under the diagnostic's referenceId. */
  logger?: { warn(details: Record<string, unknown>, message: string): void };
  probeTimeoutMs?: number;
}
