// The baseline for the webhook benchmark: a bare Fastify 5 POST route that parses the same JSON
// body and answers the same acknowledgement, with no secret check, no database and no queue.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 256 * 1024 });
app.get('/health', async () => ({ status: 'ok' }));
app.post('/bare', async (request) => {
  const body = request.body as { update_id?: unknown };
  return { ok: true, accepted: typeof body?.update_id === 'number' };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
