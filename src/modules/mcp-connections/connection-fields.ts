// The writable columns of a connection, listed once: a new connection (created, or brought by a
// plugin) and an edited one are built here from its identity and what was configured.
import type { SecretBox } from '../../platform/secrets.ts';
import type { connectionIdentity } from './connection-identity.ts';
import type { ConnectionInput } from './schemas.ts';
import type { ConnectionFields, ConnectionRow } from './store.ts';

type Configured = { name: string; orgWide: boolean } & Partial<Omit<ConnectionFields, keyof ReturnType<typeof connectionIdentity> | 'name' | 'orgWide'>>;

/** The columns of a connection with this identity: what is not `configured` is unset (no OAuth client, health unknown). */
export function connectionFields(identity: ReturnType<typeof connectionIdentity>, configured: Configured): ConnectionFields {
  return {
    ...identity,
    oauthClientId: null,
    oauthClientSecretSealed: null,
    oauthTokenEndpointAuthMethod: null,
    oauthRegistrationSource: null,
    authorizationServerIssuer: null,
    requestedScopes: [],
    health: 'unknown',
    healthReason: null,
    healthCheckedAt: null,
    ...configured,
  };
}

/** The OAuth client columns after an edit: a new client id drops the old secret unless a new one comes with it. */
export function oauthColumns(secrets: SecretBox, current: ConnectionRow | undefined, input: ConnectionInput, identityChanged: boolean) {
  const client = input.oauthClient;
  // Clients obtained automatically (dynamic registration, metadata document) belong to the old server.
  const keptSource = current && !identityChanged ? current.oauthRegistrationSource : current?.oauthRegistrationSource === 'pre-registered' ? 'pre-registered' : null;
  if (!client) {
    return {
      oauthClientId: current?.oauthClientId ?? null,
      oauthClientSecretSealed: current?.oauthClientSecretSealed ?? null,
      oauthTokenEndpointAuthMethod: current?.oauthTokenEndpointAuthMethod ?? null,
      oauthRegistrationSource: keptSource,
    };
  }
  const sameClient = current?.oauthClientId === client.clientId;
  return {
    oauthClientId: client.clientId,
    oauthClientSecretSealed: client.clientSecret !== undefined ? secrets.seal(client.clientSecret) : sameClient ? (current?.oauthClientSecretSealed ?? null) : null,
    oauthTokenEndpointAuthMethod: client.tokenEndpointAuthMethod ?? (sameClient ? (current?.oauthTokenEndpointAuthMethod ?? null) : null),
    oauthRegistrationSource: 'pre-registered' as const,
  };
}
