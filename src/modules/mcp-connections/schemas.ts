// Zod schemas of the MCP-connection routes: the spec's request limits and response shapes.

import { z } from 'zod';
import { timestampSchema, typeIdSchema, errorResponse } from '../../http/schemas.ts';
import { signingAlgorithms } from './contracts.ts';
import { mcpConnectionErrors } from './error-codes.ts';
import { signingAlgorithmFor } from './oauth/index.ts';
import { diagnosticSchema, HEADER_VALUE_PATTERN, HEADER_VALUE_RULE, highestPassedValues } from './probe/index.ts';

export const authTypeSchema = z.enum(['oauth', 'apikey', 'none']);
export const credentialModeSchema = z.enum(['shared', 'per_member']);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const httpUrlSchema = z
  .string()
  .max(2048)
  .refine(isHttpUrl, { message: 'Must be an absolute http or https URL' })
  .meta({ format: 'uri' });

/**
 * An API key travels in an HTTP header: a value no header can carry is refused here, before any
 * probe (fetch would otherwise fail with an error quoting the key, and that error is logged).
 */
export function apiKeySchema(description: string) {
  return z
    .string()
    .min(1)
    .max(4096)
    .regex(HEADER_VALUE_PATTERN, { message: `Must be ${HEADER_VALUE_RULE}` })
    .describe(`${description}. Sent in an HTTP header, so 1 to 4096 ${HEADER_VALUE_RULE}.`);
}

export const accessInputSchema = z
  .object({
    orgWide: z.boolean().default(false),
    memberIds: z.array(z.string().min(1)).max(200).default([]),
    teamIds: z.array(z.string().min(1)).max(200).default([]),
  })
  // Registered as `Access`: requests read it, and the type provider names the request form `<id>Input`,
  // which gives the spec's name, AccessInput.
  .meta({
    id: 'Access',
    description: 'Who may use the connection: the whole organization, or these members and teams',
  });

export const grantTypeSchema = z.enum(['authorization_code', 'client_credentials']);
export const tokenEndpointAuthMethodSchema = z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']);

export const oauthClientInputSchema = z
  .object({
    clientId: z.string().min(1).max(512),
    clientSecret: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Write-only. Sealed at rest; kept when an edit names the same clientId without one'),
    tokenEndpointAuthMethod: tokenEndpointAuthMethodSchema
      .optional()
      .describe(
        "How the client authenticates at the token endpoint. `private_key_jwt` (RFC 7523): a JWT signed with `privateKey`, addressed to the authorization server's issuer. " +
          'Left out: `private_key_jwt` when only a private key is given, else what the server prefers of the secret methods',
      ),
    privateKey: z
      .string()
      .min(1)
      .max(16384)
      .optional()
      .describe(
        "Write-only. private_key_jwt: the client's unencrypted private key in PEM (RSA, EC P-256/P-384/P-521 or Ed25519). Sealed at rest; kept when an edit names the same clientId without one",
      ),
    signingAlgorithm: z
      .enum(signingAlgorithms)
      .optional()
      .describe(
        "private_key_jwt: the JWS algorithm of the client assertion. Left out: RS256 for an RSA key, the curve's ES256/ES384/ES512 for an EC key, EdDSA for Ed25519",
      ),
    grantType: grantTypeSchema
      .optional()
      .describe(
        '`authorization_code` (the default): a person authorizes in a browser. `client_credentials` (RFC 6749 §4.4; shared connections only, and the client needs a secret or a private key): ' +
          "orgplane obtains the shared identity's token as the client itself, without a browser, on the first test or use, and again before it expires (the background health job)",
      ),
  })
  .superRefine((client, ctx) => {
    if (client.privateKey === undefined) return;
    const checked = signingAlgorithmFor(client.privateKey, client.signingAlgorithm);
    if ('problem' in checked) ctx.addIssue({ code: 'custom', path: ['privateKey'], message: checked.problem });
  });

export const connectionInputSchema = z.object({
  name: z.string().min(1).max(255),
  url: httpUrlSchema,
  authType: authTypeSchema,
  credentialMode: credentialModeSchema,
  access: accessInputSchema,
  apiKey: apiKeySchema('Write-only. Shared mode: the shared key; per-member mode: your own key').optional(),
  oauthClient: oauthClientInputSchema.optional(),
  authorizationServerIssuer: httpUrlSchema.nullable().optional(),
  requestedScopes: z.array(z.string().min(1).max(255)).max(100).optional(),
});
export type ConnectionInput = z.infer<typeof connectionInputSchema>;

export const editConnectionSchema = connectionInputSchema.extend({
  expectedUpdatedAt: timestampSchema.describe(
    'The `updatedAt` you last read; a different current value is 409 connection_conflict',
  ),
});
export type EditConnectionInput = z.infer<typeof editConnectionSchema>;

export const replaceAccessSchema = z.object({ access: accessInputSchema });

export const setApiKeySchema = z.object({
  apiKey: apiKeySchema('Write-only. Your own key (per-member connections) or the shared key (shared ones)'),
});

export const requiredBySchema = z.object({ pluginId: z.string(), name: z.string() }).meta({ id: 'RequiredBy' });

export const accessSummarySchema = z
  .object({ orgWide: z.boolean(), memberIds: z.array(z.string()), teamIds: z.array(z.string()) })
  .meta({ id: 'AccessSummary' });

export const toolPolicyModeSchema = z.enum(['all', 'allow_list', 'deny_list']);

export const toolPolicySchema = z
  .object({
    mode: toolPolicyModeSchema.describe(
      '`all`: every tool; `allow_list`: only the tools named; `deny_list`: every tool but those named',
    ),
    tools: z
      .array(z.string())
      .describe(
        'Tool names the mode applies to; kept when a tool leaves the catalog, so one that returns keeps its decision',
      ),
    destructiveNeedsApproval: z
      .boolean()
      .describe(
        'Each call of an allowed tool that may be destructive needs an approval (a tool may be destructive unless annotated readOnlyHint: true or destructiveHint: false, as MCP says a client must assume)',
      ),
    updatedAt: timestampSchema.nullable().describe('When it was last set; null: never set (the default, every tool)'),
  })
  .meta({ id: 'McpToolPolicy' });

export const connectionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    authType: authTypeSchema,
    credentialMode: credentialModeSchema,
    connected: z.boolean(),
    connectedAt: z.string().nullable(),
    updatedAt: timestampSchema,
    connectedForMe: z.boolean(),
    requiredBy: z.array(requiredBySchema),
    identityManagedBy: z.array(requiredBySchema),
    access: accessSummarySchema.nullable(),
    createdByName: z.string().nullable().optional(),
    needsReconnect: z.boolean().optional(),
    credentialHealth: z
      .enum(['unknown', 'ready', 'reconnect_required'])
      .optional()
      .describe(
        'Of the credential the caller would use (their own on per_member connections, the shared one otherwise). `unknown`: none stored, ' +
          'or stored and not yet checked; `ready`: accepted by the server at its last check (the credential was stored after a probe, ' +
          'a test passed, a background check passed, or an OAuth token was obtained or refreshed); `reconnect_required`: the server refused it (`authorization_rejected`), ' +
          'it expired and could not be refreshed (`credential_expired`), or it failed the check after authorization ' +
          '(`post_authorization_validation_failed`). Storing a new credential starts again from its probe; an identity change deletes it. ' +
          'Background checks (every `MCP_HEALTH_INTERVAL_SECONDS`) refresh OAuth tokens before they expire and probe each credential; ' +
          'after `MCP_HEALTH_FAILURE_THRESHOLD` checks in a row that reach no answer (server unreachable, 5xx) the credential is `reconnect_required` too.',
      ),
    credentialHealthReason: z
      .enum(['authorization_rejected', 'credential_expired', 'post_authorization_validation_failed'])
      .nullable()
      .optional(),
    credentialHealthCheckedAt: timestampSchema.nullable().optional(),
    reconnectActionOwner: z.enum(['member', 'organization_admin']).nullable().optional(),
    externalAccountId: z
      .string()
      .nullable()
      .optional()
      .describe(
        "The account at the provider the caller's OAuth credential belongs to: the `sub` claim of the ID token the token endpoint returned, else its `user_id` or " +
          '`account_id` field. null: no credential, an API key, or a provider that named no account. Kept across refreshes unless a refresh names another.',
      ),
    grantedScopes: z
      .array(z.string())
      .optional()
      .describe(
        "Scopes the authorization server granted the caller's OAuth credential (its `scope`, or what was asked when it said none); empty without one",
      ),
    tenantId: z
      .string()
      .nullable()
      .optional()
      .describe(
        "The provider's tenant (directory, workspace) of that credential: the ID token's `tid` claim, else the token response's `tenant_id`. null when the provider named none",
      ),
    requiredAuthType: authTypeSchema
      .nullable()
      .optional()
      .describe(
        'What the server demands, as the last check saw it (POST .../test, and creating or editing a no-auth connection): an unauthenticated MCP request answered is `none`; ' +
          'refused with OAuth discovery behind it (RFC 9728 resource metadata, or RFC 8414 metadata at its origin) is `oauth`; refused without is `apikey`. ' +
          'null until a check saw the server at its current url.',
      ),
    authTypeMismatch: z
      .boolean()
      .optional()
      .describe(
        'authType differs from requiredAuthType. Absent while requiredAuthType is null (nothing to compare with)',
      ),
    authPolicyConfirmed: z
      .boolean()
      .optional()
      .describe(
        'A check saw the server demand exactly the configured authType (requiredAuthType equals authType); false while that is unknown or differs',
      ),
    missingFeatures: z
      .array(z.string())
      .optional()
      .describe(
        'Server capabilities the workspace needs that the server did not declare at its last successful probe of this identity. The workspace lists and calls tools, so the one ' +
          'needed feature is `tools` (the MCP `tools` capability); empty: nothing missing. Absent until a probe of the current url, authType and credentialMode succeeded.',
      ),
    oauthClientConfigured: z.boolean().optional(),
    oauthClientRequired: z.boolean().optional(),
    setupRequired: z.boolean().optional(),
    oauthClientId: z.string().nullable().optional(),
    oauthGrantType: grantTypeSchema
      .optional()
      .describe("How the shared identity's tokens are obtained (oauthClient.grantType)"),
    oauthTokenEndpointAuthMethod: tokenEndpointAuthMethodSchema
      .nullable()
      .optional()
      .describe(
        "The configured client's token endpoint authentication, as configured; null when none was named (then chosen from what the server supports)",
      ),
    oauthClientSecretConfigured: z
      .boolean()
      .optional()
      .describe('A client secret is stored for the configured client (the secret itself is never returned)'),
    oauthClientPrivateKeyConfigured: z
      .boolean()
      .optional()
      .describe('A private key is stored for the configured client (the key itself is never returned)'),
    oauthClientSigningAlgorithm: z
      .enum(signingAlgorithms)
      .nullable()
      .optional()
      .describe('private_key_jwt: the JWS algorithm of the client assertion; null otherwise'),
    oauthCallbackUrl: z.string().nullable().optional(),
    oauthSharedCallbackUrl: z.string().nullable().optional(),
    oauthClientMetadataUrl: z.string().nullable().optional(),
    oauthCallbackMode: z
      .enum(['shared-v1', 'isolated-v1', 'legacy-v1'])
      .nullable()
      .optional()
      .describe(
        "`shared-v1`: the client is identified by this service's client ID metadata document and returns to the shared callback; `isolated-v1`: any other client, " +
          "returning to the connection's own callback. `legacy-v1` is never produced: this service has had no callback before these two, so no client was " +
          'registered with a legacy redirect URI; the value stays in the enum for clients written against the contract.',
      ),
    oauthRegistrationSource: z.enum(['pre-registered', 'client-metadata', 'dynamic']).nullable().optional(),
    issuerReviewRequired: z
      .boolean()
      .optional()
      .describe('The authorization server no longer matches the configured issuer: an administrator must review it'),
    authorizationServerIssuer: z.string().nullable().optional(),
    requestedScopes: z.array(z.string()).optional(),
    toolPolicy: toolPolicySchema,
    oauthDiscoveryPath: z
      .enum(['protected-resource-metadata', 'configured-issuer', 'legacy-metadata', 'legacy-default-endpoints'])
      .nullable()
      .optional()
      .describe(
        'OAuth connections: how the authorization server was found at the last discovery. `protected-resource-metadata`: RFC 9728 (MCP 2025-06-18 and later); ' +
          "`configured-issuer`: no RFC 9728 metadata, the configured authorizationServerIssuer; `legacy-metadata`: MCP 2025-03-26, RFC 8414 metadata at the server's origin; " +
          '`legacy-default-endpoints`: MCP 2025-03-26, no metadata, /authorize, /token and /register at the origin. null: not discovered yet.',
      ),
  })
  .meta({
    id: 'McpConnection',
    description: 'An external MCP connection as the caller sees it (secrets are never returned)',
  });

export const editedConnectionSchema = connectionSchema
  .extend({
    identityChanged: z
      .boolean()
      .describe('url, authType or credentialMode changed: every stored credential was deleted'),
    reconnectionRequired: z.boolean().describe('A credential must be obtained again before the connection can be used'),
  })
  .meta({ id: 'EditedMcpConnection' });

export const validationFailedSchema = errorResponse(
  [mcpConnectionErrors.connection_validation_failed],
  'the proposed API-key or no-auth configuration did not pass the probe',
  { extend: { message: z.string(), diagnostic: diagnosticSchema } },
);

export const testResultSchema = z.object({
  ok: z.boolean(),
  highestPassed: z.enum(highestPassedValues),
  tools: z.array(z.string()).describe('Tool names the server offers (empty on failure)'),
  diagnostic: diagnosticSchema.nullable(),
});

export const pluginIdSchema = typeIdSchema('plg');

export const pluginManifestSchema = z
  .object({
    name: z.string().min(1).max(255),
    version: z.string().min(1).max(64).optional(),
    mcpConnections: z
      .array(
        z.object({
          name: z.string().min(1).max(255),
          url: httpUrlSchema,
          authType: authTypeSchema,
          credentialMode: credentialModeSchema,
          manageIdentity: z
            .boolean()
            .default(false)
            .describe('The plugin owns url, authType and credentialMode: edits of them are refused'),
        }),
      )
      .max(50)
      .default([]),
  })
  .meta({ id: 'PluginManifest' });

export const pluginSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string().nullable(),
    requires: z.array(z.string()).describe('Connection ids the plugin requires'),
    managesIdentityOf: z.array(z.string()).describe('Connection ids whose identity the plugin manages'),
    createdAt: timestampSchema,
  })
  .meta({ id: 'Plugin' });
