// The baseline: a bare Fastify 5 app answering a small JSON body, with no database and no auth.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.get('/bare', async () => ({ organization: { id: 'org_01jqz3v6b8e9f0g1h2j3k4m5n6', name: 'Acme' } }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
