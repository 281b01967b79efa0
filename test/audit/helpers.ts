// What the audit tests share: reading an organization's events through the API and the database.
import type { TestApp } from '../support/app.ts';
import { api } from '../support/http.ts';

/** The events one request (by its X-Request-Id) wrote, read straight from the database. */
export async function eventsOfRequest(app: TestApp, requestId: string) {
  const { rows } = await app.db.query(
    '/* test */ SELECT * FROM audit_events WHERE request_id = $1 ORDER BY chain_id, seq',
    [requestId],
  );
  return rows;
}

/** A request id nobody else uses, to find a request's events by. */
export const freshRequestId = () => `audit-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;

/** Every event of the organization through the API (newest first), following the cursor. */
export async function allEvents(app: TestApp, token: string, organizationId: string, query = ''): Promise<any[]> {
  const events: any[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: any; text: string } = await api(app.url, token).get(
      `/v1/orgs/${organizationId}/audit-events?limit=200${query}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`list audit events: ${page.status} ${page.text}`);
    events.push(...page.body.events);
    cursor = page.body.nextCursor;
  } while (cursor);
  return events;
}
