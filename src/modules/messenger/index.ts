// The messenger module: `register` adds the management routes and the webhook ingress to an app; its
// job is delivery (the loop over the claims table, worker.ts). In one process the two share the loop:
// an update this process accepted wakes its idle delivery workers at once.

import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { AppModule } from '../../platform/background.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import { createIngress } from './ingress.ts';
import { createBotApi } from './platform.ts';
import { messengerRoutes } from './routes.ts';
import { createMessengerService } from './service.ts';
import { createMessengerStore } from './store.ts';
import { messengerWebhookRoutes } from './webhook-routes.ts';
import { type MessengerWorker, startMessengerWorker } from './worker.ts';

export interface MessengerModuleDeps {
  db: Database;
  config: Config;
  secrets: SecretBox;
  /** The shared guarded client. */
  outbound: OutboundClient;
  membership: Pick<MembershipAuthorization, 'holdActingMember'>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export function createMessengerModule(deps: MessengerModuleDeps): AppModule {
  requireDependencies('messenger', deps, ['db', 'config', 'secrets', 'outbound', 'membership', 'log']);
  const { db, config, secrets, outbound } = deps;
  // The delivery workers of this process, while they run.
  let worker: MessengerWorker | undefined;
  return {
    async register(app) {
      const store = createMessengerStore();
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
    },
    workers: [
      {
        name: 'messenger-delivery',
        start() {
          const started = startMessengerWorker({
            db,
            secrets,
            outbound,
            messengerApiRoot: config.messengerApiRoot,
            settings: config.messengerDelivery,
            log: deps.log,
          });
          worker = started;
          return {
            async stop() {
              await started.stop();
              if (worker === started) worker = undefined;
            },
          };
        },
      },
    ],
  };
}
// Its sealed columns, re-sealed under the newest key by `orgplane secrets reseal`.
export { messengerSealedColumns } from './sealed-columns.ts';
export { eraseMessengerOfOrganization } from './store.ts';
