// A delivery worker in its own process, as `orgplane worker` runs it: the messenger tests start it
// with `node`, and kill it. Configuration comes from the environment like the server's.
import { openDatabase } from '../../src/db/database.ts';
import { startMessengerWorker } from '../../src/modules/messenger/index.ts';
import { createOutboundClient } from '../../src/platform/outbound.ts';
import { createSecretBox } from '../../src/platform/secrets.ts';

const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 3 });
const outbound = createOutboundClient({ allowedPrivateNetworks: (process.env.ALLOWED_PRIVATE_NETWORKS ?? '').split(',').filter(Boolean) });
const worker = await startMessengerWorker({
  db,
  secrets: createSecretBox(process.env.ORGPLANE_SECRET_KEY!),
  outbound,
  messengerApiRoot: process.env.MESSENGER_API_ROOT!,
  log: { warn: (obj, msg) => console.error(msg, JSON.stringify(obj)), error: (obj, msg) => console.error(msg, JSON.stringify(obj)) },
});
process.stdout.write('worker ready\n');
process.on('SIGTERM', async () => {
  await worker.stop();
  await outbound.close();
  await db.close();
  process.exit(0);
});
