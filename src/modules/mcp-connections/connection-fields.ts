// The writable columns of a connection, listed once: a new connection (created, or brought by a
// plugin) and an edited one are built here from its identity and what was configured.
import type { ValidationDetail } from '../../http/errors.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { connectionIdentity } from './connection-identity.ts';
import type { ConnectionInput } from './schemas.ts';
import { signingAlgorithmFor } from './oauth/index.ts';
import type { ConnectionFields, ConnectionRow, SigningAlgorithm } from './contracts.ts';

type Configured = { name: string; orgWide: boolean } & Partial<
  Omit<ConnectionFields, keyof ReturnType<typeof connectionIdentity> | 'name' | 'orgWide'>
>;

/** The columns of a connection with this identity: what is not `configured` is unset (no OAuth client, health unknown). */
export function connectionFields(
  identity: ReturnType<typeof connectionIdentity>,
  configured: Configured,
): ConnectionFields {
  return {
    ...identity,
    oauthClientId: null,
    oauthClientSecretSealed: null,
    oauthTokenEndpointAuthMethod: null,
    oauthClientPrivateKeySealed: null,
    oauthClientSigningAlgorithm: null,
    oauthGrantType: 'authorization_code',
    oauthRegistrationSource: null,
    authorizationServerIssuer: null,
    requestedScopes: [],
    health: 'unknown',
    healthReason: null,
    healthCheckedAt: null,
    ...configured,
  };
}

/**
 * The OAuth client columns after an edit: a new client id drops the old secret and key unless new
 * ones come with it; the same client id keeps what is not sent again (write-only fields are never read back).
 */
export function oauthColumns(
  secrets: SecretBox,
  current: ConnectionRow | undefined,
  input: ConnectionInput,
  identityChanged: boolean,
) {
  const client = input.oauthClient;
  // Clients obtained automatically (dynamic registration, metadata document) belong to the old server.
  const keptSource =
    current && !identityChanged
      ? current.oauthRegistrationSource
      : current?.oauthRegistrationSource === 'pre-registered'
        ? 'pre-registered'
        : null;
  if (!client) {
    return {
      oauthClientId: current?.oauthClientId ?? null,
      oauthClientSecretSealed: current?.oauthClientSecretSealed ?? null,
      oauthTokenEndpointAuthMethod: current?.oauthTokenEndpointAuthMethod ?? null,
      oauthClientPrivateKeySealed: current?.oauthClientPrivateKeySealed ?? null,
      oauthClientSigningAlgorithm: current?.oauthClientSigningAlgorithm ?? null,
      oauthGrantType: current?.oauthGrantType ?? ('authorization_code' as const),
      oauthRegistrationSource: keptSource,
    };
  }
  const same = current?.oauthClientId === client.clientId ? current : undefined;
  const privateKeySealed =
    client.privateKey !== undefined ? secrets.seal(client.privateKey) : (same?.oauthClientPrivateKeySealed ?? null);
  const privateKey =
    client.privateKey ?? (same?.oauthClientPrivateKeySealed ? secrets.open(same.oauthClientPrivateKeySealed) : null);
  const checked = privateKey
    ? signingAlgorithmFor(
        privateKey,
        client.signingAlgorithm ?? (client.privateKey === undefined ? same?.oauthClientSigningAlgorithm : undefined),
      )
    : null;
  const method = client.tokenEndpointAuthMethod ?? same?.oauthTokenEndpointAuthMethod ?? null;
  // The algorithm is stored only for a client that signs: it is what marks the method private_key_jwt in the row.
  const signs =
    checked &&
    'algorithm' in checked &&
    (method === 'private_key_jwt' ||
      (method === null && client.clientSecret === undefined && !same?.oauthClientSecretSealed));
  return {
    oauthClientId: client.clientId,
    oauthClientSecretSealed:
      client.clientSecret !== undefined ? secrets.seal(client.clientSecret) : (same?.oauthClientSecretSealed ?? null),
    oauthTokenEndpointAuthMethod: signs ? ('private_key_jwt' as const) : method === 'private_key_jwt' ? null : method,
    oauthClientPrivateKeySealed: privateKeySealed,
    oauthClientSigningAlgorithm: signs ? (checked as { algorithm: SigningAlgorithm }).algorithm : null,
    oauthGrantType: client.grantType ?? same?.oauthGrantType ?? ('authorization_code' as const),
    oauthRegistrationSource: 'pre-registered' as const,
  };
}

/**
 * What an OAuth client configuration cannot do, as 400 details: private_key_jwt without a key, and
 * the client credentials grant where there is no shared identity or nothing to authenticate with
 * (a public client cannot obtain a token for itself).
 */
export function oauthClientProblems(
  columns: ReturnType<typeof oauthColumns>,
  input: ConnectionInput,
): ValidationDetail[] {
  const problems: ValidationDetail[] = [];
  const at = (field: string) => ['oauthClient', field];
  const client = input.oauthClient;
  const secretMethod =
    client?.tokenEndpointAuthMethod === 'client_secret_basic' ||
    client?.tokenEndpointAuthMethod === 'client_secret_post';
  const wantsSigning =
    client?.tokenEndpointAuthMethod === 'private_key_jwt' || (client?.signingAlgorithm !== undefined && !secretMethod);
  if (wantsSigning && !columns.oauthClientSigningAlgorithm) {
    // With a key in this request its schema already said why; a stored key the new algorithm does not fit is said here.
    if (!columns.oauthClientPrivateKeySealed)
      problems.push({ in: 'body', path: at('privateKey'), message: 'private_key_jwt needs privateKey' });
    else if (client?.privateKey === undefined)
      problems.push({
        in: 'body',
        path: at('signingAlgorithm'),
        message: 'The stored private key cannot sign with this algorithm',
      });
  }
  if (columns.oauthGrantType === 'client_credentials') {
    if (input.credentialMode !== 'shared')
      problems.push({
        in: 'body',
        path: at('grantType'),
        message: "client_credentials obtains the shared identity's token: credentialMode must be shared",
      });
    if (!columns.oauthClientSecretSealed && !columns.oauthClientSigningAlgorithm) {
      problems.push({
        in: 'body',
        path: at('grantType'),
        message: 'client_credentials needs a confidential client: give clientSecret or privateKey',
      });
    }
  }
  return problems;
}
