// Where clients discover the server: the authorization server metadata (RFC 8414 or OpenID
// Connect, path-inserted or not, with what the test chose to advertise) and the protected resource
// metadata (RFC 9728); every other well-known URL is a recorded 404.
import type { Express } from 'express';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { createOAuthMetadata } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { ServerContext } from './provider.ts';

export interface ServerUrls {
  origin: string;
  issuerUrl: URL;
  issuerPath: string;
  mcpPath: string;
  mcpUrl: string;
  prmAt: 'path' | 'root' | 'both' | 'none';
}

/** Serves both documents; answers the SDK's metadata (its endpoint URLs) for the routes that follow. */
export function serveMetadata(app: Express, ctx: ServerContext, provider: OAuthServerProvider, urls: ServerUrls) {
  const { origin, issuerUrl, issuerPath, mcpPath, mcpUrl, prmAt } = urls;
  const base = createOAuthMetadata({ provider, issuerUrl, scopesSupported: ctx.options.scopesSupported });
  const asMetadata: Record<string, unknown> = {
    ...base,
    issuer: ctx.options.advertisedIssuer ?? ctx.issuer,
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
  };
  if (ctx.options.codeChallengeMethods === null) delete asMetadata.code_challenge_methods_supported;
  else if (ctx.options.codeChallengeMethods)
    asMetadata.code_challenge_methods_supported = ctx.options.codeChallengeMethods;
  if (ctx.options.clientMetadataDocuments) asMetadata.client_id_metadata_document_supported = true;
  if (ctx.options.issParameter !== false) asMetadata.authorization_response_iss_parameter_supported = true;
  if (ctx.options.metadataStyle === 'openid') {
    Object.assign(asMetadata, {
      jwks_uri: `${origin}/jwks`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  }
  const asMetadataPath =
    ctx.options.metadataStyle === 'openid'
      ? issuerPath
        ? `/.well-known/openid-configuration${issuerPath}`
        : '/.well-known/openid-configuration'
      : `/.well-known/oauth-authorization-server${issuerPath}`;
  app.get(asMetadataPath, (req, res) => {
    ctx.stats.metadataFetches.push(req.path);
    res.json(asMetadata);
  });

  const prm = {
    resource: mcpUrl,
    authorization_servers: ctx.options.authorizationServers ?? [ctx.issuer],
    scopes_supported: ctx.options.scopesSupported,
    resource_name: 'orgplane test MCP server',
  };
  if (prmAt === 'path' || prmAt === 'both') {
    app.get(`/.well-known/oauth-protected-resource${mcpPath}`, (req, res) => {
      ctx.stats.metadataFetches.push(req.path);
      res.json(prm);
    });
  }
  if (prmAt === 'root' || prmAt === 'both') {
    app.get('/.well-known/oauth-protected-resource', (req, res) => {
      ctx.stats.metadataFetches.push(req.path);
      res.json(prm);
    });
  }
  // Every other well-known URL is a 404 (the SDK router would otherwise serve its defaults
  // there); misses are recorded too, since tests check the order in which clients look.
  app.use('/.well-known', (req, res) => {
    ctx.stats.metadataFetches.push(`${req.baseUrl}${req.path}`);
    res.status(404).json({ error: 'not_found' });
  });
  return base;
}
