// The client credentials grant (RFC 6749 §4.4), which the SDK's token handler does not offer:
// answered here, after ./client-authentication.ts has authenticated the client (a private_key_jwt
// assertion is verified there; a secret is checked here), for clients registered with
// `clientCredentials`. No refresh token is issued (§4.4.3).
import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { oauthError } from './client-authentication.ts';
import type { ServerContext } from './provider.ts';
import type { TokenRequestRecord } from './types.ts';

type IssueTokens = (
  clientId: string,
  scopes: string[],
  resource: string | undefined,
  grantId: string,
  refresh?: boolean,
) => OAuthTokens;

export function serveClientCredentials(app: Express, ctx: ServerContext, tokenPath: string, issueTokens: IssueTokens) {
  app.post(tokenPath, (req: Request, res: Response, next: NextFunction) => {
    const body = req.body as Record<string, string>;
    if (body.grant_type !== 'client_credentials') return next();
    const record = ctx.stats.tokenRequests[ctx.stats.tokenRequests.length - 1] as TokenRequestRecord | undefined;
    const client = body.client_id ? ctx.clients.get(body.client_id) : undefined;
    if (!client) return oauthError(res, 401, 'invalid_client', 'Unknown client');
    const authenticated =
      record?.authMethod === 'private_key_jwt' ||
      (record?.authMethod !== 'none' &&
        client.client_secret !== undefined &&
        body.client_secret === client.client_secret);
    if (!authenticated) return oauthError(res, 401, 'invalid_client', 'Client authentication failed');
    if (!client.client_credentials)
      return oauthError(res, 400, 'unauthorized_client', 'This client may not use the client credentials grant');
    if (ctx.options.refuseClientCredentials)
      return oauthError(res, 400, ctx.options.refuseClientCredentials, 'Refused by the test');
    const scopes = body.scope ? body.scope.split(' ').filter(Boolean) : [];
    res.json(issueTokens(client.client_id, scopes, body.resource, randomUUID(), false));
  });
}
