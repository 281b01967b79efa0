// A bare Node server for the webhook benchmark (ingress.ts): node:http, reads the body, parses the
// JSON and answers the webhook's acknowledgement. No secret, no database: the ceiling of any ingress.
import { createServer } from 'node:http';

const ack = JSON.stringify({ ok: true, accepted: true });
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let update: { update_id?: unknown };
    try {
      update = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      response.writeHead(400).end();
      return;
    }
    if (typeof update?.update_id !== 'number') return void response.writeHead(400).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(ack);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
