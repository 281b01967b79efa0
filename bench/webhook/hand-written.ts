// A hand-written durable webhook ingress, the way an integrator writes one (OpenWork's den route does
// this): a plain node:http server that checks the secret header, parses the update and does one
// `INSERT ... ON CONFLICT DO NOTHING` per request, answering after it committed. No batching, no
// queue: what orgplane's ingress is compared with (ingress.ts). DATABASE_URL: a fresh database.
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query(
  'CREATE TABLE IF NOT EXISTS webhook_updates (connection_id text NOT NULL, update_id bigint NOT NULL, body jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (connection_id, update_id))',
);
const secret = Buffer.from(process.env.WEBHOOK_SECRET ?? 'bench-secret');

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const given = Buffer.from(String(request.headers['x-telegram-bot-api-secret-token'] ?? ''));
  if (given.length !== secret.length || !timingSafeEqual(given, secret)) {
    response.writeHead(401).end();
    return;
  }
  const connectionId = (request.url ?? '').split('/').at(-1) ?? '';
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let update: { update_id?: unknown };
    try {
      update = JSON.parse(text);
    } catch {
      response.writeHead(400).end();
      return;
    }
    if (typeof update?.update_id !== 'number') return void response.writeHead(400).end();
    pool
      .query(
        'INSERT INTO webhook_updates (connection_id, update_id, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [connectionId, update.update_id, text],
      )
      .then(
        (result) =>
          response
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: true, accepted: result.rowCount === 1 })),
        () => response.writeHead(503).end(),
      );
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
