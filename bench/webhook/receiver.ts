// The delivery receiver of the webhook benchmark (ingress.ts), in its own process as an integrator's
// bot backend would be: answers every delivery 200 with no reply, and counts them (GET /count).
import { createServer } from 'node:http';

let delivered = 0;
const server = createServer((request, response) => {
  if (request.method === 'GET' && (request.url === '/health' || request.url === '/count')) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', delivered }));
    return;
  }
  request.resume();
  request.on('end', () => {
    delivered += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
