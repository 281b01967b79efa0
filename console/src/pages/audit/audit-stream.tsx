// The audit-log stream's settings (owners and admins): where the organization's events are POSTed, on or
// off, its delivery state explained (retrying, stopped after too many failures, with the last error),
// resuming a stopped stream, the signing secret shown once (on creation or rotation, after a
// confirmation), and removal after a confirmation.
import { useEffect, useState } from 'preact/hooks';
import { api, type components } from '../../api.ts';
import { AdminPage } from '../../admin-page.tsx';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useMutation, useQuery, useStatus } from '../../data.ts';
import { Field, FormError } from '../../forms.tsx';

type Stream = components['schemas']['AuditStream'];
type Pending = 'rotate' | 'delete' | null;

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

const stateText: Record<Stream['state'], string> = {
  active: 'Delivering: events are sent as they are recorded.',
  retrying: 'The last batch failed and is being retried, with a growing delay.',
  dead: 'Delivery stopped after too many failed attempts. Nothing was skipped: fix the receiver, then resume, and it continues from the first event not delivered.',
  disabled: 'Turned off: events wait, and are sent from where it stopped once it is turned on.',
};

export function AuditStreamPage({ organizationId }: { organizationId: string }) {
  const [url, setUrl] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [pending, setPending] = useState<Pending>(null);
  // The signing secret, shown once right after it was generated; the API never answers it again.
  const [secret, setSecret] = useState<string | null>(null);
  const path = { organizationId };

  // undefined while loading, null when the organization has no stream.
  const read = useQuery(
    () => api.GET('/v1/orgs/{organizationId}/audit-stream', { params: { path } }),
    [organizationId],
    {
      absent: 'audit_stream_not_found',
      select: (data): Stream | null => data.stream,
    },
  );
  const stream = read.data;
  const loadError = read.error;
  // The form starts from the stream as first read for this organization; Refresh leaves it alone.
  const [formOfOrganization, setFormOfOrganization] = useState<string | null>(null);
  useEffect(() => setSecret(null), [organizationId]);
  useEffect(() => {
    if (stream === undefined || formOfOrganization === organizationId) return;
    setUrl(stream?.url ?? '');
    setEnabled(stream?.enabled ?? true);
    setFormOfOrganization(organizationId);
  }, [stream]);

  const status = useStatus();
  const putting = useMutation(
    (body: { url: string; enabled: boolean; rotateSecret?: boolean }, _done: string) =>
      api.PUT('/v1/orgs/{organizationId}/audit-stream', { params: { path }, body }),
    {
      status,
      progress: 'Saving…',
      success: (_data, _body, done) => done,
      onSuccess: (data) => {
        read.setData(data.stream);
        setEnabled(data.stream.enabled);
        if (data.signingSecret) setSecret(data.signingSecret);
      },
    },
  );
  const removing = useMutation(() => api.DELETE('/v1/orgs/{organizationId}/audit-stream', { params: { path } }), {
    status,
    progress: 'Saving…',
    success: 'The stream was removed; no more events are sent.',
    onSuccess: () => {
      read.setData(null);
      setSecret(null);
      setUrl('');
      setEnabled(true);
    },
  });
  const busy = putting.pending || removing.pending;
  const error = putting.error ?? removing.error;
  const put = (body: { url: string; enabled: boolean; rotateSecret?: boolean }, done: string) => {
    setPending(null);
    return putting.mutate(body, done);
  };
  const remove = () => {
    setPending(null);
    return removing.mutate();
  };
  const load = read.refetch;

  return (
    <section aria-labelledby="stream-heading">
      <AdminPage
        organizationId={organizationId}
        heading={<h1 id="stream-heading">Audit stream</h1>}
        what="the audit stream"
        loadError={loadError}
        loading={stream === undefined}
      >
        <p>
          Sends every event of the audit log, in order, to your SIEM's HTTP endpoint: signed NDJSON batches (header{' '}
          <code>X-Orgplane-Signature</code>, an HMAC-SHA256 of the body under the signing secret).
        </p>
        {!stream && (
          <p class="note">
            No stream yet. A new stream starts with the events recorded from then on; export the audit log for older
            ones.
          </p>
        )}
        <form
          class="inline-form stream-form"
          onSubmit={(event) => {
            event.preventDefault();
            void put({ url, enabled }, stream ? 'Saved.' : 'The stream was created. Copy the signing secret now.');
          }}
          noValidate
          aria-label="Audit stream settings"
        >
          <Field
            label="Receiver URL"
            name="url"
            type="url"
            value={url}
            onInput={setUrl}
            error={error}
            autoComplete="off"
          />
          <label class="choice">
            <input
              type="checkbox"
              checked={enabled}
              onChange={(event) => setEnabled((event.target as HTMLInputElement).checked)}
            />
            Deliver events
          </label>
          <button type="submit" disabled={busy}>
            {stream ? 'Save stream' : 'Create stream'}
          </button>
        </form>
        <FormError error={error} />
        <p role="status" class="progress">
          {status.message}
        </p>
        {secret && (
          <section class="secret" aria-label="New signing secret">
            <p>
              <strong>Copy the signing secret now: you will not see it again.</strong> Your receiver checks each batch's
              signature with it.
            </p>
            <CopyField label="Signing secret" id="stream-signing-secret" value={secret} />
            <button type="button" class="secondary" onClick={() => setSecret(null)}>
              I have stored it
            </button>
          </section>
        )}
        {stream && (
          <section class="card" aria-labelledby="stream-state-heading">
            <h2 id="stream-state-heading">Delivery</h2>
            <p>{stateText[stream.state]}</p>
            <dl class="summary">
              <dt>State</dt>
              <dd>{stream.state}</dd>
              <dt>Last delivered</dt>
              <dd>{when(stream.lastDeliveredAt)}</dd>
              <dt>Events waiting</dt>
              <dd>
                {stream.pendingEvents}
                {stream.oldestPendingAt ? ` (oldest recorded ${when(stream.oldestPendingAt)})` : ''}
              </dd>
              {stream.failedAttempts > 0 && (
                <>
                  <dt>Failed attempts</dt>
                  <dd>{stream.failedAttempts}</dd>
                </>
              )}
              {stream.nextAttemptAt && (
                <>
                  <dt>Next attempt</dt>
                  <dd>{when(stream.nextAttemptAt)}</dd>
                </>
              )}
              {stream.deadLetteredAt && (
                <>
                  <dt>Stopped</dt>
                  <dd>{when(stream.deadLetteredAt)}</dd>
                </>
              )}
              {stream.lastError && (
                <>
                  <dt>Last error</dt>
                  <dd>
                    {stream.lastError} ({when(stream.lastErrorAt)})
                  </dd>
                </>
              )}
            </dl>
            <div class="actions-row">
              <button type="button" class="secondary" disabled={busy} onClick={() => void load()}>
                Refresh
              </button>
              {(stream.state === 'dead' || stream.state === 'retrying') && (
                <button
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    void put({ url: stream.url, enabled: true }, 'Delivery resumed from the first event not delivered.')
                  }
                >
                  Resume delivery
                </button>
              )}
              <button type="button" class="danger" disabled={busy} onClick={() => setPending('rotate')}>
                Rotate signing secret
              </button>
              <button type="button" class="danger" disabled={busy} onClick={() => setPending('delete')}>
                Remove stream
              </button>
            </div>
          </section>
        )}
        {pending === 'rotate' && stream && (
          <ConfirmDialog
            title="Rotate the signing secret?"
            message="The next batches are signed with a new secret: your receiver refuses them until it has the new one."
            confirmLabel="Rotate secret"
            onConfirm={() =>
              void put(
                { url: stream.url, enabled: stream.enabled, rotateSecret: true },
                'A new signing secret was made. Copy it now.',
              )
            }
            onCancel={() => setPending(null)}
          />
        )}
        {pending === 'delete' && (
          <ConfirmDialog
            title="Remove the audit stream?"
            message="Events not delivered yet are not sent, and a stream set up again starts with the events recorded from then on."
            confirmLabel="Remove stream"
            onConfirm={() => void remove()}
            onCancel={() => setPending(null)}
          />
        )}
      </AdminPage>
    </section>
  );
}
