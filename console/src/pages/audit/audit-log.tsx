import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type components } from '../../api.ts';
import { useList, useMutation, useStatus } from '../../data.ts';
import { Field, FormError } from '../../forms.tsx';
import { auditActionInWords } from '../../../../shared/audit-action-words.ts';

type AuditEvent = components['schemas']['AuditEvent'];
type Outcome = AuditEvent['outcome'];
interface Filters {
  actor: string;
  action: string;
  target: string;
  outcome: '' | Outcome;
  since: string;
  until: string;
}
const noFilters: Filters = { actor: '', action: '', target: '', outcome: '', since: '', until: '' };

// <input type="datetime-local"> gives the person's local time without a zone; the API takes UTC.
// An unreadable value is passed on as typed, so the API's own message names the field.
function toUtc(local: string): string | undefined {
  if (!local) return undefined;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? local : time.toISOString();
}

function queryOf(filters: Filters) {
  return {
    actor: filters.actor || undefined,
    action: filters.action || undefined,
    target: filters.target || undefined,
    outcome: filters.outcome || undefined,
    since: toUtc(filters.since),
    until: toUtc(filters.until),
  };
}

function actorLabel(actor: AuditEvent['actor']): string {
  if (actor.name && actor.email) return `${actor.name} (${actor.email})`;
  return actor.name ?? actor.email ?? `${actor.type} ${actor.id}`;
}

/** What a target's type is called in a sentence. */
const targetTypes: Readonly<Record<string, string>> = {
  api_key: 'API key',
  audit_stream: 'audit stream',
  install_link: 'install link',
  mcp_connection: 'MCP connection',
  messenger_connection: 'bot',
  scim_connector: 'SCIM connector',
  scim_group: 'SCIM group',
  scim_user: 'SCIM user',
  sso_connection: 'SSO connection',
};

/**
 * The target by the name it had when the event was written (recorded with it); an event written before
 * names were recorded shows the id, as recorded. The type and id are on hover either way.
 */
function Target({ target }: { target: AuditEvent['target'] }) {
  const raw = `${target.type} ${target.id}`;
  if (target.name) return <span title={raw}>{target.name}</span>;
  return (
    <span title={raw}>
      {targetTypes[target.type] ?? target.type} <code>{target.id}</code>
    </span>
  );
}

/** Saves a downloaded body under `name`: the export needs the bearer token, so a plain link cannot fetch it. */
function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function AuditLogPage({ organizationId }: { organizationId: string }) {
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [applied, setApplied] = useState<Filters>(noFilters);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const path = { organizationId };
  const toggle = (id: string) =>
    setOpen((shown) => {
      const next = new Set(shown);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const set = (name: keyof Filters) => (value: string) => setFilters({ ...filters, [name]: value });

  const eventsUnder = (wanted: Filters) => (cursor: string | undefined) =>
    api.GET('/v1/orgs/{organizationId}/audit-events', {
      params: { path, query: { ...queryOf(wanted), limit: 50, cursor } },
    });
  const list = useList(eventsUnder(noFilters), (page) => page.events, [organizationId], { pageByPage: true });
  const events = list.items ?? null;
  useEffect(() => setApplied(noFilters), [organizationId]);
  // The filters count as applied once the API accepted them: a refused filter leaves the list as it was.
  async function load(wanted: Filters) {
    if (!(await list.reload(eventsUnder(wanted)))) return;
    setApplied(wanted);
    setOpen(new Set());
  }

  const status = useStatus();
  const exporting = useMutation(
    (format: 'ndjson' | 'csv') => {
      const { since, until } = queryOf(applied);
      return api.GET('/v1/orgs/{organizationId}/audit-events/export', {
        params: { path, query: { format, since, until } },
        parseAs: 'blob',
      });
    },
    {
      status,
      progress: (format) => `Preparing the ${format.toUpperCase()} export…`,
      onSuccess: (data, format) => save(data as unknown as Blob, `audit-events.${format === 'csv' ? 'csv' : 'ndjson'}`),
      success: (_, format) => `The ${format.toUpperCase()} export was downloaded.`,
    },
  );
  const verifying = useMutation(() => api.GET('/v1/orgs/{organizationId}/audit-events/verify', { params: { path } }), {
    status,
    progress: 'Verifying the hash chain…',
    success: (result) =>
      result.ok
        ? `The chain verifies: ${result.checked} events, none changed, removed or reordered.`
        : `The chain is broken at event ${result.brokenAt} (after ${result.checked} good events): ${result.reason}`,
  });
  const exportAs = (format: 'ndjson' | 'csv') => exporting.mutate(format);
  const verify = () => verifying.mutate();
  const error = list.error ?? exporting.error ?? verifying.error;
  const loading = { start: 'Loading events…', more: 'Loading more events…' } as const;

  const forbidden = error?.error === 'forbidden';
  return (
    <section aria-labelledby="audit-heading">
      <h1 id="audit-heading">Audit log</h1>
      <form
        class="filters"
        aria-label="Filter events"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void load(filters);
        }}
      >
        <Field
          label="Actor (id or e-mail)"
          name="actor"
          value={filters.actor}
          onInput={set('actor')}
          error={error}
          required={false}
        />
        <Field
          label="Action or prefix"
          name="action"
          value={filters.action}
          onInput={set('action')}
          error={error}
          required={false}
        />
        <Field
          label="Target id"
          name="target"
          value={filters.target}
          onInput={set('target')}
          error={error}
          required={false}
        />
        <div class="field">
          <label for="field-outcome">Outcome</label>
          <select
            id="field-outcome"
            value={filters.outcome}
            onChange={(event) => set('outcome')((event.target as HTMLSelectElement).value)}
          >
            <option value="">Any</option>
            <option value="success">Success</option>
            <option value="denied">Denied</option>
            <option value="failure">Failure</option>
          </select>
        </div>
        <Field
          label="From (your time)"
          name="since"
          type="datetime-local"
          value={filters.since}
          onInput={set('since')}
          error={error}
          required={false}
        />
        <Field
          label="Until (your time)"
          name="until"
          type="datetime-local"
          value={filters.until}
          onInput={set('until')}
          error={error}
          required={false}
        />
        <div class="filter-actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setFilters(noFilters);
              void load(noFilters);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={() => exportAs('csv')}>
          Export CSV
        </button>
        <button type="button" class="secondary" onClick={() => exportAs('ndjson')}>
          Export NDJSON
        </button>
        <button type="button" class="secondary" onClick={verify}>
          Verify the chain
        </button>
      </div>
      <p role="status">{list.fetching ? loading[list.fetching] : status.message}</p>
      {forbidden ? (
        <p role="alert" class="form-error">
          Only owners and admins can read the audit log.
        </p>
      ) : (
        <FormError error={error} />
      )}
      {events?.length === 0 && (
        <p>
          {Object.values(applied).some(Boolean)
            ? 'No event matches these filters. Clear them to see every event.'
            : 'No events yet. Every change made in this organization will be listed here.'}
        </p>
      )}
      {events && events.length > 0 && (
        <table class="audit">
          <caption class="visually-hidden">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <Fragment key={event.id}>
                <tr>
                  <td>
                    <time dateTime={event.occurredAt}>{new Date(event.occurredAt).toLocaleString()}</time>
                  </td>
                  <td>
                    <span title={`${event.actor.type} ${event.actor.id}`}>{actorLabel(event.actor)}</span>
                  </td>
                  <td>
                    <span title={event.action} data-action={event.action}>
                      {auditActionInWords(event.action)}
                    </span>
                    {event.outcome !== 'success' && (
                      <strong class={`outcome-${event.outcome}`}> {event.outcome}</strong>
                    )}
                  </td>
                  <td>
                    <Target target={event.target} />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open.has(event.id)}
                      aria-controls={`details-${event.id}`}
                      onClick={() => toggle(event.id)}
                    >
                      Details
                      <span class="visually-hidden">
                        {' '}
                        of {event.action} at {event.occurredAt}
                      </span>
                    </button>
                  </td>
                </tr>
                <tr id={`details-${event.id}`} class="event-details" hidden={!open.has(event.id)}>
                  <td colSpan={5}>
                    <dl>
                      <dt>Event</dt>
                      <dd>{event.id}</dd>
                      <dt>Action</dt>
                      <dd>
                        <code>{event.action}</code>
                      </dd>
                      <dt>Target</dt>
                      <dd>
                        {event.target.type} <code>{event.target.id}</code>
                      </dd>
                      <dt>From</dt>
                      <dd>
                        {event.ip ?? '—'} {event.userAgent ?? ''}
                      </dd>
                      <dt>Request</dt>
                      <dd>{event.requestId ?? '—'}</dd>
                      {event.changes && (
                        <>
                          <dt>Changes</dt>
                          <dd>
                            <pre>{JSON.stringify(event.changes, null, 2)}</pre>
                          </dd>
                        </>
                      )}
                    </dl>
                  </td>
                </tr>
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
      {list.more && (
        <button type="button" class="secondary more" onClick={list.more}>
          Load older events
        </button>
      )}
    </section>
  );
}
