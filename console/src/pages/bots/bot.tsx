// /bots/<id>: one bot connection, its recent updates with their delivery state, its dead letters, its
// settings (delivery URL, enabled), and disconnecting it. The API has no route to deliver a dead letter
// again, so none is offered.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { Link, navigate } from '../../router.tsx';

type BotConnection = components['schemas']['MessengerConnection'];
type Update = components['schemas']['MessengerUpdate'];

const statusLabels: Record<Update['status'], string> = {
  queued: 'Queued',
  retrying: 'Retrying',
  delivered: 'Delivered',
  dead: 'Dead letter',
};
/** While an update is still being delivered the page reads the list again this often. */
const followMs = 2000;
const when = (time: string | null) => (time ? <time dateTime={time}>{new Date(time).toLocaleString()}</time> : '—');

export function BotPage({ connectionId }: { connectionId: string }) {
  const [deleting, setDeleting] = useState(false);
  const path = { connectionId };
  const read = useQuery(
    () => api.GET('/v1/messenger/connections/{connectionId}', { params: { path } }),
    [connectionId],
    {
      select: (data) => data.connection,
    },
  );
  const connection = read.data ?? null;
  // Recent updates and dead letters, read together (one answer, one error).
  const lists = useQuery(async () => {
    const [recent, letters] = await Promise.all([
      api.GET('/v1/messenger/connections/{connectionId}/updates', { params: { path, query: { limit: 50 } } }),
      api.GET('/v1/messenger/connections/{connectionId}/updates', {
        params: { path, query: { limit: 50, status: 'dead' } },
      }),
    ]);
    const error = recent.error ?? letters.error;
    if (error || !recent.data || !letters.data) return { error };
    return { data: { updates: recent.data.updates, dead: letters.data.updates } };
  }, [connectionId]);
  const updates = lists.data?.updates ?? null;
  const dead = lists.data?.dead ?? null;

  const inFlight = updates?.some((update) => update.status === 'queued' || update.status === 'retrying') ?? false;
  useEffect(() => {
    if (!inFlight) return;
    const timer = setTimeout(() => void lists.refetch(), followMs);
    return () => clearTimeout(timer);
  }, [updates]);

  const disconnecting = useMutation(
    () => api.DELETE('/v1/messenger/connections/{connectionId}', { params: { path } }),
    { onSuccess: () => navigate('/bots') },
  );
  const disconnect = () => {
    setDeleting(false);
    void disconnecting.mutate();
  };
  const error = disconnecting.error ?? read.error ?? lists.error;

  const back = (
    <p>
      <Link href="/bots">← All bots</Link>
    </p>
  );
  if (!connection)
    return (
      <section aria-label="Bot">
        {back}
        <p aria-live="polite">{error ? errorMessage(error) : 'Loading the bot…'}</p>
      </section>
    );
  const name = `@${connection.botUsername}`;
  return (
    <section aria-labelledby="bot-heading" class="bot">
      {back}
      <h1 id="bot-heading">{name}</h1>
      <dl class="summary">
        <dt>Status</dt>
        <dd>{connection.status === 'active' ? 'Active: updates are accepted' : 'Disabled: updates are refused'}</dd>
        <dt>Delivery URL</dt>
        <dd class="url">{connection.deliveryUrl}</dd>
        <dt>Webhook</dt>
        <dd class="url">{connection.webhookUrl}</dd>
        <dt>Connected</dt>
        <dd>{when(connection.createdAt)}</dd>
      </dl>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}

      <section aria-labelledby="bot-updates-heading">
        <div class="page-head">
          <h2 id="bot-updates-heading">Recent updates</h2>
          <button type="button" class="secondary" onClick={() => lists.refetch()}>
            Refresh
          </button>
        </div>
        <p role="status">
          {inFlight ? `Deliveries in progress: the list is read again every ${followMs / 1000} seconds.` : ''}
        </p>
        {updates?.length === 0 && (
          <p class="empty">
            No updates yet. Send {name} a message on the platform: it is listed here, then delivered to the delivery
            URL.
          </p>
        )}
        {updates && updates.length > 0 && (
          <table class="bot-updates">
            <caption class="visually-hidden">Recent updates of {name}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Update</th>
                <th scope="col">Chat</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Received</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {updates.map((update) => (
                <tr key={update.updateId} data-status={update.status}>
                  <td data-label="Update">{update.updateId}</td>
                  <td data-label="Chat">{update.chatId ?? '—'}</td>
                  <td data-label="Status">{statusLabels[update.status]}</td>
                  <td data-label="Attempts">{update.attempts}</td>
                  <td data-label="Received">{when(update.receivedAt)}</td>
                  <td data-label="Outcome">
                    {update.status === 'delivered' ? (
                      <>
                        Delivered {when(update.deliveredAt)}
                        {update.replyStatus && `; reply ${update.replyStatus}`}
                      </>
                    ) : (
                      (update.lastError ?? '—')
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section aria-labelledby="bot-dead-heading">
        <h2 id="bot-dead-heading">Dead letters</h2>
        {dead?.length === 0 && (
          <p class="empty">No dead letters: every update was delivered or is still being tried.</p>
        )}
        {dead && dead.length > 0 && (
          <>
            <p>
              These updates were given up after their last attempt and will not be delivered. orgplane cannot send them
              again: fix the receiver from the error below, and updates received from now on are delivered.
            </p>
            <ul class="dead-letters" aria-label={`Dead letters of ${name}`}>
              {dead.map((update) => (
                <li key={update.updateId}>
                  <strong>Update {update.updateId}</strong>
                  {update.chatId && <> from chat {update.chatId}</>}: {update.attempts} attempts, the last{' '}
                  {when(update.lastAttemptAt)}.<p class="form-error">{update.lastError ?? 'No error was recorded.'}</p>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>

      <SettingsSection connection={connection} onSaved={read.setData} />

      <section aria-labelledby="bot-delete-heading" class="danger-zone">
        <h2 id="bot-delete-heading">Disconnect</h2>
        <p>Disconnecting removes the webhook from the platform and deletes this connection with its updates.</p>
        <button type="button" class="danger" onClick={() => setDeleting(true)}>
          Disconnect {name}
        </button>
      </section>
      {deleting && (
        <ConfirmDialog
          title={`Disconnect ${name}?`}
          message="The platform stops sending this bot's messages here. Updates not yet delivered are discarded and never delivered. This cannot be undone; connect the bot again to resume."
          confirmLabel="Disconnect bot"
          onConfirm={disconnect}
          onCancel={() => setDeleting(false)}
        />
      )}
    </section>
  );
}

function SettingsSection({
  connection,
  onSaved,
}: {
  connection: BotConnection;
  onSaved: (connection: BotConnection) => void;
}) {
  const [deliveryUrl, setDeliveryUrl] = useState(connection.deliveryUrl);
  const [confirmDisable, setConfirmDisable] = useState(false);
  const active = connection.status === 'active';
  const saving = useMutation(
    (body: { enabled?: boolean; deliveryUrl?: string }, _done: string) =>
      api.PATCH('/v1/messenger/connections/{connectionId}', {
        params: { path: { connectionId: connection.id } },
        body,
      }),
    { progress: 'Saving…', success: (_data, _body, done) => done, onSuccess: (data) => onSaved(data.connection) },
  );
  const { pending: busy, error } = saving;
  const save = (body: { enabled?: boolean; deliveryUrl?: string }, done: string) => {
    setConfirmDisable(false);
    void saving.mutate(body, done);
  };

  return (
    <section aria-labelledby="bot-settings-heading">
      <h2 id="bot-settings-heading">Settings</h2>
      <form
        class="inline-form"
        noValidate
        aria-label="Change the delivery URL"
        onSubmit={submitted(() =>
          save(
            { deliveryUrl },
            'The delivery URL was saved: updates are delivered there from now on, retries included.',
          ),
        )}
      >
        <Field
          label="Delivery URL"
          name="deliveryUrl"
          type="url"
          value={deliveryUrl}
          onInput={setDeliveryUrl}
          error={error}
          autoComplete="off"
        />
        <button type="submit" disabled={busy}>
          Save delivery URL
        </button>
      </form>
      <p>
        {active
          ? 'Disabling refuses the updates the platform sends from then on (they are not kept); updates already accepted are still delivered. Disable the bot before disconnecting it to let them drain.'
          : 'Disabled: the updates the platform sends are refused and not kept. Enable the bot to accept them again.'}
      </p>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={() =>
          active
            ? setConfirmDisable(true)
            : save({ enabled: true }, 'The bot is enabled: its updates are accepted again.')
        }
      >
        {active ? 'Disable the bot' : 'Enable the bot'}
      </button>
      <FormError error={error} />
      <p role="status">{saving.status}</p>
      {confirmDisable && (
        <ConfirmDialog
          title={`Disable @${connection.botUsername}?`}
          message="Messages people send the bot while it is disabled are refused and lost; updates already accepted are still delivered."
          confirmLabel="Disable bot"
          onConfirm={() => save({ enabled: false }, 'The bot is disabled: new updates are refused.')}
          onCancel={() => setConfirmDisable(false)}
        />
      )}
    </section>
  );
}
