// Wires the messenger module into an app: pg-boss (for jobs queued by versions before 0504; new
// updates are queued by their claim rows), the management routes, the webhook ingress and, unless RUN_WORKERS=false, in-process delivery workers.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createOutboundClient, type OutboundClient } from '../../platform/outbound.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import { createJobQueue } from '../../platform/queue.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { MembershipCore } from '../identity/index.ts';
import { createIngress } from './ingress.ts';
import { createBotApi } from './platform.ts';
import { messengerRoutes } from './routes.ts';
import { createMessengerService } from './service.ts';
import { createMessengerStore } from './store.ts';
import { messengerWebhookRoutes } from './webhook-routes.ts';
import { deliveryQueueDefinition, startMessengerWorker, type MessengerWorker } from './worker.ts';

export { startMessengerWorker } from './worker.ts';

export interface MessengerModuleDeps {
  db: Database;
  config: Config;
  secrets: SecretBox;
  /** The shared guarded client; one is created from config when absent. */
  outbound?: OutboundClient;
  membership: Pick<MembershipCore, 'holdActingMember'>;
}

export async function registerMessenger(app: FastifyInstance, deps: MessengerModuleDeps): Promise<void> {
  requireDependencies('messenger', deps, ['db', 'config', 'secrets', 'membership']);
  const { db, config, secrets } = deps;
  const settings = config.messengerDelivery;
  const ownsOutbound = !deps.outbound;
  const outbound = deps.outbound ?? createOutboundClient({ allowedPrivateNetworks: config.allowedPrivateNetworks });
  const queue = createJobQueue(db, {
    superviseIntervalSeconds: settings.superviseIntervalSeconds,
    onError: (error) => app.log.warn({ err: error }, 'messenger: queue error'),
  });
  await queue.start([deliveryQueueDefinition(settings)]);

  const store = createMessengerStore();
  let worker: MessengerWorker | undefined;
  const ingress = createIngress({ db, store, onEnqueued: () => worker?.wake() });
  const service = createMessengerService({
    db,
    store,
    secrets,
    botApi: createBotApi({ apiRoot: config.messengerApiRoot, outbound }),
    outbound,
    publicUrl: config.publicUrl,
    forgetConnection: (id) => ingress.forget(id),
    membership: deps.membership,
    log: app.log,
  });
  await app.register(messengerRoutes, { service, publicUrl: config.publicUrl });
  await app.register(messengerWebhookRoutes, { ingress });

  if (config.runWorkers) {
    worker = await startMessengerWorker({
      db,
      secrets,
      outbound,
      messengerApiRoot: config.messengerApiRoot,
      queue,
      settings,
      log: app.log,
    });
  }
  app.addHook('onClose', async () => {
    await worker?.stop();
    await queue.stop();
    if (ownsOutbound) await outbound.close();
  });
}
