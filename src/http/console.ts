// Serves the admin console (console/, built into console/dist by scripts/build-console.ts during npm ci):
// the HTML at `/` and at every GET path no route claims (client-side routes), and the hashed assets.
// The API's prefixes keep their own JSON 404s. Assets were precompressed at build time, so no request
// compresses anything.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { htmlPage } from './html-page.ts';

export const consoleDistDir = resolve(import.meta.dirname, '../../console/dist');

const apiPrefixes = ['/v1', '/scim/v2', '/docs', '/health', '/install', '/openapi.json', '/metrics', '/ready'];

// No inline script or style and no eval; the console calls only its own origin.
export const consoleCsp =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const commonHeaders: Record<string, string> = {
  'content-security-policy': consoleCsp,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Variant {
  body: Buffer;
  encoding: 'br' | 'gzip' | null;
}
interface Asset {
  type: string;
  variants: Variant[];
}

function loadVariants(path: string): Variant[] {
  const variants: Variant[] = [];
  if (existsSync(`${path}.br`)) variants.push({ body: readFileSync(`${path}.br`), encoding: 'br' });
  if (existsSync(`${path}.gz`)) variants.push({ body: readFileSync(`${path}.gz`), encoding: 'gzip' });
  variants.push({ body: readFileSync(path), encoding: null });
  return variants;
}

function acceptedEncodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const quality = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && (!quality || Number(quality.slice(2)) > 0)) accepted.add(name.trim());
  }
  return accepted;
}

function pickVariant(variants: Variant[], acceptEncoding: string | undefined): Variant {
  const accepted = acceptedEncodings(acceptEncoding);
  return variants.find((v) => v.encoding === null || accepted.has(v.encoding))!;
}

function send(
  reply: FastifyReply,
  request: FastifyRequest,
  type: string,
  variants: Variant[],
  cacheControl: string,
  status = 200,
) {
  const variant = pickVariant(variants, request.headers['accept-encoding']);
  reply
    .status(status)
    .headers({ ...commonHeaders, 'content-type': type, 'cache-control': cacheControl, vary: 'accept-encoding' });
  if (variant.encoding) reply.header('content-encoding', variant.encoding);
  return reply.send(variant.body);
}

const missingBuildPage = htmlPage(
  'Console not built',
  "<h1>The console has not been built</h1><p>This server answers its API under <code>/v1</code>, but the web console's files are missing. Run <code>npm run build:console</code> (it runs during <code>npm ci</code>) and restart.</p>",
);

export function isApiPath(url: string): boolean {
  const path = url.split('?')[0]!;
  return apiPrefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Registers the asset routes and returns the handler for unclaimed paths: the console's HTML for a GET
 * outside the API's prefixes, `apiNotFound` for the rest.
 */
export function registerConsole(
  app: FastifyInstance,
  apiNotFound: (request: FastifyRequest, reply: FastifyReply) => unknown,
  distDir = consoleDistDir,
) {
  const indexPath = join(distDir, 'index.html');
  const built = existsSync(indexPath);
  const index = built ? loadVariants(indexPath) : null;
  const assets = new Map<string, Asset>();
  const assetDir = join(distDir, 'assets');
  if (built && existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const extension = /\.[a-z]+$/.exec(name)?.[0] ?? '';
      if (!contentTypes[extension]) continue;
      assets.set(name, { type: contentTypes[extension]!, variants: loadVariants(join(assetDir, name)) });
    }
  }

  app.get('/assets/:name', { schema: { hide: true } }, (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.status(404).headers(commonHeaders).type('text/plain; charset=utf-8').send('Not found');
    return send(reply, request, asset.type, asset.variants, 'public, max-age=31536000, immutable');
  });

  return (request: FastifyRequest, reply: FastifyReply) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || isApiPath(request.url))
      return apiNotFound(request, reply);
    if (!index) {
      return reply
        .status(503)
        .headers({ ...commonHeaders, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
        .send(missingBuildPage);
    }
    return send(reply, request, 'text/html; charset=utf-8', index, 'no-cache');
  };
}
