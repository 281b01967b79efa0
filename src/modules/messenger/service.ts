// Bot connections: the rules around creating (getMe, fresh secrets, setWebhook), listing, changing
// and deleting them, and reading their updates. HTTP lives in routes.ts, SQL in store.ts.

import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/database.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import { type ApiError, invalidRequest } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import { pointsToBlockedAddress } from '../../platform/signed-delivery.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import { refusedLikeAuthenticate } from '../identity/index.ts';
import { BotApiError, type BotApi } from './platform.ts';
import type { ConnectionRow, ConnectionStatus, MessengerStore, UpdateRow, UpdateStatus } from './store.ts';
import { messengerErrors } from './error-codes.ts';

export interface MessengerServiceDeps {
  db: Database;
  store: MessengerStore;
  secrets: SecretBox;
  botApi: BotApi;
  /** Checks delivery URLs against the outbound address policy when they are set. */
  outbound: OutboundClient;
  publicUrl: string;
  /** Drops a deleted connection's cached webhook secret in this process. */
  forgetConnection(connectionId: string): void;
  /** Holds the acting member's row while their connection is stored. */
  membership: Pick<MembershipAuthorization, 'holdActingMember'>;
  log: FastifyBaseLogger;
}

export interface ActingMember {
  organizationId: string;
  memberId: string | null;
}

/** Who manages connections: the roles of the routes' check (routes.ts), checked again as a connection is stored. */

/** The member a write's caller acts as (authenticate({ roles }) guarantees the organization). */
function actingMemberOf(ctx: CallerContext): ActingMember {
  return { organizationId: ctx.actor.organizationId!, memberId: ctx.actor.memberId };
}

const connectionNotFound = () => messengerErrors.connection_not_found('No such bot connection in this organization');

export function webhookUrlOf(publicUrl: string, connectionId: string): string {
  return `${publicUrl}/v1/webhooks/messenger/${connectionId}`;
}

function platformError(error: unknown, action: string): ApiError {
  if (error instanceof BotApiError) {
    return messengerErrors.platform_error(`The messaging platform refused ${action}: ${error.message}`);
  }
  return messengerErrors.platform_unavailable(
    `The messaging platform could not be reached, or did not answer as its Bot API does, to ${action}`,
  );
}

export function createMessengerService(deps: MessengerServiceDeps) {
  const { db, store, secrets, botApi } = deps;

  /**
   * Refuses a delivery URL whose host is an address the outbound policy would never dial (private,
   * loopback, metadata...), so the mistake shows now rather than as dead letters. A name that does
   * not resolve yet is allowed: DNS may come later, and every delivery is checked again at connect time.
   */
  async function checkDeliveryUrl(url: string): Promise<void> {
    if (await pointsToBlockedAddress(deps.outbound, url)) {
      throw invalidRequest([
        {
          message: 'The delivery URL points to an address outbound calls may not reach',
          path: ['deliveryUrl'],
          in: 'body',
        },
      ]);
    }
  }

  async function ownConnection(actor: ActingMember, connectionId: string): Promise<ConnectionRow> {
    const row = await store.getConnection(db, actor.organizationId, connectionId);
    if (!row) throw connectionNotFound();
    return row;
  }

  return {
    /**
     * Checks the token with getMe, stores the connection with fresh secrets, registers the webhook.
     * Returns the delivery secret, which is shown this once.
     */
    async createConnection(
      ctx: CallerContext,
      input: { botToken: string; deliveryUrl: string },
    ): Promise<{ connection: ConnectionRow; deliverySecret: string }> {
      const actor = actingMemberOf(ctx);
      await checkDeliveryUrl(input.deliveryUrl);
      let bot: Awaited<ReturnType<typeof botApi.getMe>>;
      try {
        bot = await botApi.getMe(input.botToken);
      } catch (error) {
        if (error instanceof BotApiError && (error.errorCode === 401 || error.errorCode === 404)) {
          throw messengerErrors.invalid_bot_token('The messaging platform did not accept this bot token');
        }
        throw platformError(error, 'check the bot token');
      }
      const id = newId('emc');
      // 256 random bits each, base64url: only A-Z a-z 0-9 _ -, as the platform requires of secret_token.
      const webhookSecret = randomToken(32);
      const deliverySecret = randomToken(32);
      const connection = await writeTransaction(db, ctx, async (tx) => {
        // The platform was asked first, which takes a while: the caller may have been removed or
        // demoted since the route's check. Checked again, and held until the connection is stored.
        await deps.membership.holdActingMember(tx, actor.organizationId, actor.memberId, {
          permission: 'messenger.manage',
          refuse: refusedLikeAuthenticate,
        });
        // A bot has one webhook: connecting it here would silently take it from another organization's
        // connection (which would stay "active" and receive nothing), and deleting either would cut the
        // other off. The lock makes two organizations connecting one bot at once take turns.
        await lockUntilCommit(tx, `messenger-bot:${bot.id}`);
        if (await store.botConnectedElsewhere(tx, bot.id, actor.organizationId)) {
          throw messengerErrors.bot_already_connected(
            'This bot is connected in another organization; a bot has a single webhook, so disconnect it there first',
          );
        }
        tx.audit({
          action: 'messenger_connection.created',
          organizationId: actor.organizationId,
          target: { type: 'messenger_connection', id, name: bot.username ?? bot.first_name },
          changes: { deliveryUrl: input.deliveryUrl, botToken: redacted, deliverySecret: redacted },
        });
        return store.insertConnection(tx, {
          id,
          organizationId: actor.organizationId,
          botId: bot.id,
          botUsername: bot.username ?? bot.first_name,
          botTokenSealed: secrets.seal(input.botToken),
          webhookSecretHash: hashToken(webhookSecret),
          deliveryUrl: input.deliveryUrl,
          deliverySecretSealed: secrets.seal(deliverySecret),
          createdByMemberId: actor.memberId,
        });
      });
      if (!connection) throw messengerErrors.connection_conflict('This bot is already connected in this organization');
      try {
        await botApi.setWebhook(input.botToken, { url: webhookUrlOf(deps.publicUrl, id), secret_token: webhookSecret });
      } catch (error) {
        // Without a webhook the connection would receive nothing: do not keep it.
        await writeTransaction(db, ctx, async (tx) => {
          await store.deleteConnection(tx, actor.organizationId, id);
          tx.audit({
            action: 'messenger_connection.deleted',
            organizationId: actor.organizationId,
            target: { type: 'messenger_connection', id },
            changes: { reason: 'webhook_registration_failed' },
          });
        });
        throw platformError(error, 'register the webhook');
      }
      return { connection, deliverySecret };
    },

    async listConnections(
      actor: ActingMember,
      page: { after: string | undefined; limit: number },
    ): Promise<ConnectionRow[]> {
      return store.listConnections(db, actor.organizationId, page.after, page.limit + 1);
    },

    getConnection: ownConnection,

    async updateConnection(
      ctx: CallerContext,
      connectionId: string,
      changes: { enabled?: boolean; deliveryUrl?: string },
    ): Promise<ConnectionRow> {
      if (changes.deliveryUrl) await checkDeliveryUrl(changes.deliveryUrl);
      const status: ConnectionStatus | undefined =
        changes.enabled === undefined ? undefined : changes.enabled ? 'active' : 'disabled';
      const organizationId = actingMemberOf(ctx).organizationId;
      const row = await writeTransaction(db, ctx, async (tx) => {
        const updated = await store.updateConnection(tx, organizationId, connectionId, {
          ...(status ? { status } : {}),
          ...(changes.deliveryUrl ? { deliveryUrl: changes.deliveryUrl } : {}),
        });
        if (updated)
          tx.audit({
            action: 'messenger_connection.updated',
            organizationId,
            target: { type: 'messenger_connection', id: connectionId, name: updated.bot_username },
            changes,
          });
        return updated;
      });
      if (!row) throw connectionNotFound();
      return row;
    },

    /** Deletes the connection and its webhook registration (the platform's refusal does not keep it). */
    async deleteConnection(ctx: CallerContext, connectionId: string): Promise<void> {
      const actor = actingMemberOf(ctx);
      const row = await ownConnection(actor, connectionId);
      try {
        await botApi.deleteWebhook(secrets.open(row.bot_token_sealed));
      } catch (error) {
        // A revoked token or an unreachable platform must not make a connection undeletable; the
        // webhook then points at a connection that no longer exists and is refused (401).
        deps.log.warn(
          { connectionId, reason: error instanceof Error ? error.message : 'unknown' },
          'messenger: deleteWebhook failed; deleting the connection anyway',
        );
      }
      const deleted = await writeTransaction(db, ctx, async (tx) => {
        const done = await store.deleteConnection(tx, actor.organizationId, connectionId);
        if (done)
          tx.audit({
            action: 'messenger_connection.deleted',
            organizationId: actor.organizationId,
            target: { type: 'messenger_connection', id: connectionId, name: done.bot_username },
          });
        return done;
      });
      if (!deleted) throw connectionNotFound();
      deps.forgetConnection(connectionId);
    },

    async listUpdates(
      actor: ActingMember,
      connectionId: string,
      filter: { status: UpdateStatus | undefined; beforeUpdateId: number | undefined; limit: number },
    ): Promise<UpdateRow[]> {
      await ownConnection(actor, connectionId);
      return store.listUpdates(db, actor.organizationId, connectionId, { ...filter, limit: filter.limit + 1 });
    },
  };
}

export type MessengerService = ReturnType<typeof createMessengerService>;
