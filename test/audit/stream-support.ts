// What the audit-stream tests share: a SIEM stand-in (a real HTTP server on loopback that records every
// batch, checks nothing itself and answers as the test says), fast delivery timings, and waiting.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuditStreamSettings, Config } from '../../src/config.ts';

export const loopbackOnly = ['127.0.0.0/8', '::1/128'];

/** Short timings so that retries and dead letters happen within a test (the defaults are in src/config.ts). */
export function streamConfig(settings: Partial<AuditStreamSettings> = {}): Partial<Config> {
  return {
    allowedPrivateNetworks: loopbackOnly,
    logLevel: 'warn',
    auditStream: {
      maxAttempts: 3,
      retryDelaySeconds: 1,
      maxRetryDelaySeconds: 1,
      batchSize: 3,
      pollingIntervalSeconds: 0.1,
      deliveryTimeoutMs: 5_000,
      leaseSeconds: 30,
      ...settings,
    },
  };
}

export interface ReceivedBatch {
  headers: IncomingMessage['headers'];
  body: string;
  events: any[];
  /** What the receiver answered. */
  status: number;
}

export interface SiemReceiver {
  url: string;
  batches: ReceivedBatch[];
  /** The status to answer (200 by default; anything else refuses the batch). */
  status: number;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  /** The most batches ever in flight at once. */
  maxInFlight: number;
  /** The events of the batches answered 2xx, in the order they arrived. */
  accepted(): any[];
  close(): Promise<void>;
}

export async function startSiemReceiver(): Promise<SiemReceiver> {
  let inFlight = 0;
  const receiver: SiemReceiver = {
    url: '',
    batches: [],
    status: 200,
    delayMs: 0,
    maxInFlight: 0,
    accepted: () =>
      receiver.batches.filter((batch) => batch.status >= 200 && batch.status < 300).flatMap((batch) => batch.events),
    close: async () => {},
  };
  const server = createServer(async (req, res) => {
    inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    let body = '';
    for await (const chunk of req) body += chunk;
    if (receiver.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.delayMs));
    const status = receiver.status;
    const events = body
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    receiver.batches.push({ headers: req.headers, body, events, status });
    inFlight--;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siem/intake`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

export function expectedSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Resolves when `predicate` holds, checking every `intervalMs`; fails after `timeoutMs` (a bound, not an assertion on speed). */
export async function eventually<T>(
  predicate: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The organization's events from the stream's creation on, oldest first, as the export gives them. */
export async function streamedEventsExpected(url: string, token: string, organizationId: string): Promise<any[]> {
  const response = await fetch(`${url}/v1/orgs/${organizationId}/audit-events/export`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const events = (await response.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const start = events.findLastIndex((event) => event.action === 'audit_stream.created');
  if (start < 0) throw new Error('no audit_stream.created event');
  return events.slice(start);
}
