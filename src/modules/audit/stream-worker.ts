// Delivery of audit-log streams, by workers in the server process (RUN_WORKERS) or in `orgplane worker`.
//
// A stream's queue is its organization's chain: the events after the stream's cursor, in order. A worker
// takes due streams (stream-store.ts: FOR UPDATE SKIP LOCKED, then a lease), reads the next batch of up
// to AUDIT_STREAM_BATCH_SIZE events and POSTs it as NDJSON (one event per line, as the export gives
// it), signed with `X-Orgplane-Signature: sha256=<hex HMAC-SHA256 of the body>` under the stream's
// signing secret. A 2xx answer moves the cursor past the batch; anything else is retried with
// exponential backoff (AUDIT_STREAM_RETRY_DELAY_SECONDS, doubling, up to ..._MAX_...), and after
// AUDIT_STREAM_ATTEMPTS failures of one batch the stream is dead: it stops, keeps its cursor (nothing
// is skipped), and resumes when it is enabled again (PUT with `enabled: true`).
//
// At least once: a worker that dies mid-attempt leaves its lease to expire, then a worker sends the
// batch again; a late settle of an attempt whose lease was taken over changes nothing. Receivers
// deduplicate on the events' ids. One attempt at a time per stream, so batches arrive in order.
import type { AuditStreamSettings } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import { startPollLoop } from '../../platform/poll-loop.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import {
  retryDelaySeconds,
  SIGNATURE_HEADER,
  signDelivery,
  tenantVisibleError,
} from '../../platform/signed-delivery.ts';
import * as streams from './stream-store.ts';
import { textPage } from './export-text.ts';

export interface AuditStreamWorkerDeps {
  db: Database;
  secrets: SecretBox;
  outbound: OutboundClient;
  settings: AuditStreamSettings;
  log?: { warn(obj: object, msg: string): void };
}

export interface AuditStreamWorker {
  stop(): Promise<void>;
}

/** Streams attempted at once per process (of different organizations). */
const streamsAtOnce = 4;

class StreamDeliveryError extends Error {}

export function startAuditStreamWorker(deps: AuditStreamWorkerDeps): AuditStreamWorker {
  const { db, secrets, outbound, settings } = deps;
  const pollMs = Math.max(100, settings.pollingIntervalSeconds * 1000);

  async function post(stream: streams.LeasedStream, body: string, count: number): Promise<void> {
    let status: number;
    try {
      // The answer is read (and discarded) so the connection can be reused; an unreadable one does
      // not undo a 2xx.
      ({ status } = await outbound.post(stream.url, {
        headers: {
          'content-type': 'application/x-ndjson; charset=utf-8',
          [SIGNATURE_HEADER]: signDelivery(secrets.open(stream.signingSecretSealed), body),
          'x-orgplane-organization-id': stream.organizationId,
          'x-orgplane-event-count': String(count),
          'x-orgplane-attempt': String(stream.attempt),
        },
        body,
        timeoutMs: settings.deliveryTimeoutMs,
        maxResponseBytes: 64 * 1024,
      }));
    } catch (error) {
      throw new StreamDeliveryError(`delivery failed: ${tenantVisibleError(error)}`);
    }
    if (status < 200 || status > 299) throw new StreamDeliveryError(`the receiver answered HTTP ${status}`);
  }

  async function attempt(stream: streams.LeasedStream): Promise<void> {
    try {
      // The export's NDJSON lines, made by the database (export-text.ts).
      const batch = await textPage(
        db,
        { organizationId: stream.organizationId, afterSeq: stream.cursorSeq },
        settings.batchSize,
        'ndjson',
      );
      if (batch.count === 0) return await streams.release(db, stream);
      await post(stream, batch.text, batch.count);
      await streams.markDelivered(db, stream, { seq: batch.lastSeq, eventId: batch.lastEventId! });
    } catch (error) {
      const message = error instanceof StreamDeliveryError ? error.message : tenantVisibleError(error);
      try {
        const dead = await streams.markFailed(
          db,
          stream,
          `attempt ${stream.attempt}: ${message}`,
          retryDelaySeconds(settings, stream.attempt),
          settings.maxAttempts,
        );
        if (dead)
          deps.log?.warn(
            { organizationId: stream.organizationId, attempts: stream.attempt },
            'audit: stream dead-lettered',
          );
      } catch (settleError) {
        // The lease expires and the batch is taken again: nothing is lost, only delayed.
        deps.log?.warn(
          { err: settleError, organizationId: stream.organizationId },
          'audit: a stream attempt could not be settled',
        );
      }
    }
  }

  async function round(): Promise<boolean> {
    let taken: streams.LeasedStream[] = [];
    try {
      taken = await streams.takeStreams(db, streamsAtOnce, settings.leaseSeconds);
    } catch (error) {
      deps.log?.warn({ err: error }, 'audit: taking streams failed');
      // A failed round in /metrics; the loop waits its interval, as after an idle round.
      throw error;
    }
    await Promise.all(taken.map(attempt));
    // Streams with more to send are due again at once; an idle round waits for the next poll.
    return taken.length > 0;
  }

  const loop = startPollLoop({ name: 'audit-streams', intervalMs: pollMs, round });
  return { stop: () => loop.stop() };
}
