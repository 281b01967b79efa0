// What the OAuth flows are built from, and what they answer. Each step (client-acquisition.ts,
// start-authorization.ts, complete-authorization.ts, access-tokens.ts, connection-test.ts) is a
// module-level function taking the few of these it uses.
import type { Database } from '../../../db/database.ts';
import type { OutboundClient } from '../../../platform/outbound.ts';
import type { RateLimiter } from '../../../platform/rate-limiter.ts';
import type { SecretBox } from '../../../platform/secrets.ts';
import type { MembershipAuthorization } from '../../identity/index.ts';
import type { ConnectionRecords } from '../contracts.ts';
import type { CredentialHealthReason, FetchLike, OAuthFlowError } from './errors.ts';

export interface OAuthDeps {
  db: Database;
  secrets: SecretBox;
  publicUrl: string;
  outbound: OutboundClient;
  /** The outbound client's fetch, as the protocol steps take it. */
  fetch: FetchLike;
  /** HMAC key for `state`, derived from the server secret (state.ts deriveStateKey). */
  stateKey: Buffer;
  connections: ConnectionRecords;
  members: Pick<MembershipAuthorization, 'holdActingMember' | 'getMember' | 'activeMemberPermissions'>;
  /** Bounds how many authorizations a member can start (each dials the servers several times). */
  limiter: RateLimiter;
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

/** A usable access token, or why there is none (access-tokens.ts usableAccessToken; client-credentials.ts for a client's own). */
export type AccessTokenResult =
  | { status: 'ok'; accessToken: string; scopes: string[]; refreshed: boolean }
  | { status: 'none' }
  | { status: 'reconnect_required'; reason: CredentialHealthReason }
  | { status: 'unavailable'; error: OAuthFlowError };
