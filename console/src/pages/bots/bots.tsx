// /bots: the organization's messaging-bot connections and the form that connects one (owners and
// admins); /bots/<id> (bot.tsx) is one connection with its updates and dead letters.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError, type components } from '../../api.ts';
import { CopyField } from '../../copy.tsx';
import { useList, useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { Link } from '../../router.tsx';

type BotConnection = components['schemas']['MessengerConnection'];

/** The platform's refusal of the token has no field path; it belongs beside the token. */
function tokenRefusalOnItsField(error: ApiError): ApiError {
  if (error.error !== 'invalid_bot_token') return error;
  return { ...error, details: [{ path: ['botToken'], message: errorMessage(error) }] };
}

export function BotListPage({ organizationId }: { organizationId: string }) {
  const [botToken, setBotToken] = useState('');
  const [deliveryUrl, setDeliveryUrl] = useState('');
  // The delivery secret, shown once right after connecting; the API never answers it again.
  const [created, setCreated] = useState<{ connection: BotConnection; deliverySecret: string } | null>(null);
  useEffect(() => setCreated(null), [organizationId]);
  const list = useList(
    (cursor) => api.GET('/v1/messenger/connections', { params: { query: { limit: 100, cursor } } }),
    (page) => page.connections,
    [organizationId],
  );
  const connections = list.items ?? null;
  const loadError = list.error;
  const connecting = useMutation(() => api.POST('/v1/messenger/connections', { body: { botToken, deliveryUrl } }), {
    progress: 'Checking the token with the platform and registering the webhook…',
    mapError: tokenRefusalOnItsField,
    onSuccess: (data) => {
      setCreated(data);
      setBotToken('');
      setDeliveryUrl('');
      return list.reload();
    },
  });
  const { pending: busy, error: formError } = connecting;

  if (loadError?.error === 'forbidden' && connections === null) {
    return (
      <section aria-labelledby="bots-heading">
        <h1 id="bots-heading">Bots</h1>
        <p>
          Only owners and admins connect messaging bots and read their updates. Ask one of them to connect a bot for
          your team.
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="bots-heading">
      <h1 id="bots-heading">Bots</h1>
      <p>
        A connected bot's messages come to orgplane, which acknowledges them to the platform and delivers each to your
        delivery URL, signed, retrying failures. A reply your receiver answers is sent back to the chat.
      </p>
      <form class="bot-connect" onSubmit={submitted(connecting.mutate)} noValidate aria-label="Connect a bot">
        <Field
          label="Bot token"
          name="botToken"
          type="password"
          value={botToken}
          onInput={setBotToken}
          error={formError}
          autoComplete="off"
        />
        <Field
          label="Delivery URL"
          name="deliveryUrl"
          type="url"
          value={deliveryUrl}
          onInput={setDeliveryUrl}
          error={formError}
          autoComplete="off"
        />
        <button type="submit" disabled={busy}>
          Connect bot
        </button>
      </form>
      <FormError error={formError} />
      <p role="status">{connecting.status}</p>
      {created && (
        <section class="secret" aria-label="New bot connection">
          <p>
            <strong>
              @{created.connection.botUsername} is connected. Copy its delivery secret now: you will not see it again.
            </strong>{' '}
            Your receiver checks each delivery's <code>X-Orgplane-Signature: sha256=…</code> header, an HMAC-SHA256 of
            the body under this secret.
          </p>
          <CopyField label="Delivery secret" id="new-delivery-secret" value={created.deliverySecret} />
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </section>
      )}
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {connections === null && !loadError && <p aria-live="polite">Loading bots…</p>}
      {connections?.length === 0 && (
        <p class="empty">
          No bots connected yet. Create a bot with the platform's BotFather, then paste its token above with the URL of
          the service that should receive its messages.
        </p>
      )}
      {connections && connections.length > 0 && (
        <table class="bots">
          <caption class="visually-hidden">Connected bots</caption>
          <thead>
            <tr>
              <th scope="col">Bot</th>
              <th scope="col">Delivery URL</th>
              <th scope="col">Status</th>
              <th scope="col">Connected</th>
            </tr>
          </thead>
          <tbody>
            {connections.map((connection) => (
              <tr key={connection.id}>
                <td data-label="Bot">
                  <Link href={`/bots/${encodeURIComponent(connection.id)}`}>@{connection.botUsername}</Link>
                </td>
                <td data-label="Delivery URL" class="url">
                  {connection.deliveryUrl}
                </td>
                <td data-label="Status">{connection.status === 'active' ? 'Active' : 'Disabled'}</td>
                <td data-label="Connected">
                  <time dateTime={connection.createdAt}>{new Date(connection.createdAt).toLocaleDateString()}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
