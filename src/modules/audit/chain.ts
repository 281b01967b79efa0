// The hash chain of an organization's events: each event's hash is the SHA-256 of its canonical form,
// which includes the hash of the event before it, so changing, removing or reordering a stored event
// breaks the chain at that event.
import { createHash } from 'node:crypto';

export interface AuditEvent {
  id: string;
  organizationId: string | null;
  occurredAt: string;
  action: string;
  outcome: 'success' | 'denied' | 'failure';
  actor: { type: string; id: string; name: string | null; email: string | null };
  target: { type: string; id: string; name: string | null };
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  changes: Record<string, unknown> | null;
}

/** A chain starts from this "previous hash" (or from a retention checkpoint's hash). */
export const genesisHash = '0'.repeat(64);

/** JSON with object keys sorted at every level, so a value read back from jsonb gives the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The hash of an event at position `seq` of its chain, after the event whose hash is `prevHash`. */
export function eventHash(event: AuditEvent, seq: number, prevHash: string): string {
  const canonical = canonicalJson({ ...event, seq, prevHash });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

export type Verification =
  | { ok: true; checked: number }
  | { ok: false; checked: number; brokenAt: string; reason: string };

/**
 * Checks a chain read in seq order, page by page: `next` gives the following rows (empty at the end).
 * Reports the first event whose position, link or content does not match.
 */
export async function verifyChain(
  start: { seq: number; hash: string },
  next: (afterSeq: number) => Promise<{ event: AuditEvent; seq: number; prevHash: string; hash: string }[]>,
): Promise<Verification> {
  let expectedSeq = start.seq + 1;
  let previous = start.hash;
  let checked = 0;
  for (;;) {
    const rows = await next(expectedSeq - 1);
    if (rows.length === 0) return { ok: true, checked };
    for (const row of rows) {
      if (row.seq !== expectedSeq)
        return {
          ok: false,
          checked,
          brokenAt: row.event.id,
          reason: `expected event number ${expectedSeq} of the chain, found ${row.seq}: events are missing or out of order`,
        };
      if (row.prevHash !== previous)
        return {
          ok: false,
          checked,
          brokenAt: row.event.id,
          reason: 'its link to the previous event does not match: an event before it was removed, reordered or changed',
        };
      if (eventHash(row.event, row.seq, row.prevHash) !== row.hash)
        return {
          ok: false,
          checked,
          brokenAt: row.event.id,
          reason: 'its content does not match its hash: the event was changed',
        };
      previous = row.hash;
      expectedSeq++;
      checked++;
    }
  }
}
