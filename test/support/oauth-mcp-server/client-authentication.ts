// The token endpoint's client authentication. The SDK's token handler reads client_id and
// client_secret from the body (client_secret_post); this middleware, in front of it, accepts HTTP
// Basic (RFC 6749 §2.3.1) and signed client assertions (private_key_jwt, RFC 7523 §2.2: signature,
// iss = sub = the client, aud this issuer or the token endpoint, expiry, single-use jti) too, records
// which method was used, and holds each client to the method it registered, so a test proves the
// method really used.
import { constants, verify, type KeyObject } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { ServerContext, TestClientRecord } from './provider.ts';
import type { TokenRequestRecord } from './types.ts';

export function oauthError(res: Response, status: number, error: string, description: string) {
  res.status(status).json({ error, error_description: description });
}

export function authenticateClients(
  app: Express,
  ctx: ServerContext,
  getClient: (clientId: string) => Promise<TestClientRecord | undefined>,
  endpoints: { origin: string; tokenPath: string; revocationPath: string | undefined },
) {
  const { origin, tokenPath, revocationPath } = endpoints;
  for (const path of [tokenPath, revocationPath].filter((p): p is string => Boolean(p))) {
    app.use(path, express.urlencoded({ extended: false }), async (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== 'POST') return next();
      const body = (req.body ?? {}) as Record<string, string>;
      let method: TokenRequestRecord['authMethod'] = body.client_secret ? 'client_secret_post' : 'none';
      const header = req.headers.authorization;
      if (header && /^basic /i.test(header)) {
        const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) return oauthError(res, 401, 'invalid_client', 'Malformed Basic credentials');
        const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
        const id = decode(decoded.slice(0, colon));
        if (body.client_id && body.client_id !== id)
          return oauthError(res, 400, 'invalid_request', 'Two client identities');
        body.client_id = id;
        body.client_secret = decode(decoded.slice(colon + 1));
        method = 'client_secret_basic';
      }
      if (body.client_assertion_type !== undefined || body.client_assertion !== undefined) {
        const asserted = verifyClientAssertion(ctx, body, [ctx.issuer, `${origin}${tokenPath}`]);
        if ('problem' in asserted) return oauthError(res, 401, 'invalid_client', asserted.problem);
        body.client_id = asserted.clientId;
        delete body.client_assertion;
        delete body.client_assertion_type;
        method = 'private_key_jwt';
      }
      const client = body.client_id ? await getClient(body.client_id) : undefined;
      const registered = client?.token_endpoint_auth_method;
      if (path === tokenPath) {
        ctx.stats.tokenRequests.push({
          grantType: body.grant_type ?? '',
          clientId: body.client_id ?? '',
          authMethod: method,
          resource: body.resource,
          ...(body.scope !== undefined ? { scope: body.scope } : {}),
          outcome: 'refused',
        });
        const record = ctx.stats.tokenRequests[ctx.stats.tokenRequests.length - 1]!;
        res.on('finish', () => {
          if (res.statusCode === 200) record.outcome = 'issued';
        });
      }
      if (
        client &&
        registered &&
        registered !== method &&
        (registered === 'client_secret_basic' ||
          registered === 'client_secret_post' ||
          registered === 'private_key_jwt')
      ) {
        return oauthError(res, 401, 'invalid_client', `Client must authenticate with ${registered}`);
      }
      req.body = body;
      next();
    });
  }
}

const seenJtis = new Set<string>();

function verifySignature(alg: string, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  const digest = alg === 'EdDSA' ? null : `sha${alg.slice(2)}`;
  if (alg.startsWith('PS'))
    return verify(
      digest,
      input,
      { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 },
      signature,
    );
  if (alg.startsWith('ES')) return verify(digest, input, { key, dsaEncoding: 'ieee-p1363' }, signature);
  return verify(digest, input, key, signature);
}

/** RFC 7523 §3: the checks an authorization server makes of a client assertion. */
function verifyClientAssertion(
  ctx: ServerContext,
  body: Record<string, string>,
  audiences: string[],
): { clientId: string } | { problem: string } {
  if (body.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    return { problem: 'Unsupported client_assertion_type' };
  const parts = (body.client_assertion ?? '').split('.');
  if (parts.length !== 3) return { problem: 'The client assertion is not a JWS' };
  let header: { alg?: string };
  let claims: { iss?: string; sub?: string; aud?: string | string[]; exp?: number; jti?: string };
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return { problem: 'The client assertion cannot be read' };
  }
  const clientId = body.client_id ?? claims.iss;
  const client = clientId ? ctx.clients.get(clientId) : undefined;
  if (!client?.public_key) return { problem: 'No key is registered for this client' };
  if (
    !header.alg ||
    header.alg === 'none' ||
    !verifySignature(
      header.alg,
      client.public_key,
      Buffer.from(`${parts[0]}.${parts[1]}`),
      Buffer.from(parts[2]!, 'base64url'),
    )
  ) {
    return { problem: 'The client assertion signature does not verify' };
  }
  if (claims.iss !== clientId || claims.sub !== clientId) return { problem: 'iss and sub must be the client id' };
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  const strip = (value: string | undefined) => value?.replace(/\/+$/, '');
  if (!aud.some((value) => audiences.some((expected) => strip(value) === strip(expected))))
    return { problem: 'The assertion is not addressed to this server' };
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now())
    return { problem: 'The client assertion expired' };
  if (!claims.jti || seenJtis.has(claims.jti)) return { problem: 'The client assertion was replayed' };
  seenJtis.add(claims.jti);
  return { clientId: clientId! };
}
