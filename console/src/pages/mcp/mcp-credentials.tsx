// Storing an API key (PUT .../credentials: one's own on per-member connections, the shared one for
// admins; probed first) and disconnecting (DELETE .../credentials), after a confirmation.
import { useState } from 'preact/hooks';
import { api, errorMessage, fieldErrors, type ApiError } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { diagnosticOf, DiagnosticView, type Connection } from './mcp-parts.tsx';

interface Props {
  connection: Connection;
  isAdmin: boolean;
  onChanged: () => Promise<void>;
}

export function ApiKeyForm({ connection, isAdmin, onChanged }: Props) {
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState('');
  const perMember = connection.credentialMode === 'per_member';
  if (!perMember && !isAdmin) return null;

  async function store(event: Event) {
    event.preventDefault();
    setError(undefined);
    setStatus('');
    setBusy(true);
    const answer = await api.PUT('/v1/mcp-connections/{connectionId}/credentials', {
      params: { path: { connectionId: connection.id } },
      body: { apiKey },
    });
    setBusy(false);
    if (answer.error) return setError(answer.error as ApiError);
    setApiKey('');
    setStatus('The key passed the check and is stored.');
    await onChanged();
  }

  const diagnostic = diagnosticOf(error);
  const messages = fieldErrors(error, 'apiKey');
  return (
    <form
      class="inline-form"
      onSubmit={store}
      noValidate
      aria-label={perMember ? 'Your API key' : 'Shared API key'}
      aria-busy={busy}
    >
      {/* Not the shared Field: the settings form on the same page has its own apiKey field, and ids must differ. */}
      <div class="field">
        <label for="credential-apiKey">{perMember ? 'Your API key' : 'New shared API key'}</label>
        <input
          id="credential-apiKey"
          type="password"
          value={apiKey}
          autoComplete="new-password"
          aria-invalid={messages.length > 0}
          aria-describedby={messages.length > 0 ? 'credential-apiKey-error' : undefined}
          onInput={(event) => setApiKey((event.target as HTMLInputElement).value)}
        />
        {messages.length > 0 && (
          <p id="credential-apiKey-error" class="field-error">
            {messages.join(' ')}
          </p>
        )}
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Checking the key…' : 'Check and store the key'}
      </button>
      <p role="status" class="progress">
        {busy ? 'Checking the key against the server…' : status}
      </p>
      {diagnostic ? (
        <DiagnosticView diagnostic={diagnostic} title="The key did not pass the check; nothing was stored" />
      ) : (
        error &&
        (error.details?.length ?? 0) === 0 && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )
      )}
    </form>
  );
}

export function DisconnectButton({ connection, isAdmin, onChanged }: Props) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [status, setStatus] = useState('');
  const perMember = connection.credentialMode === 'per_member';
  if (connection.authType === 'none' || !connection.connectedForMe || (!perMember && !isAdmin))
    return status ? <p role="status">{status}</p> : null;

  async function disconnect() {
    setAsking(false);
    setError(undefined);
    const answer = await api.DELETE('/v1/mcp-connections/{connectionId}/credentials', {
      params: { path: { connectionId: connection.id } },
    });
    if (answer.error) return setError(answer.error as ApiError);
    setStatus(perMember ? 'Your credential was deleted.' : "The organization's credential was deleted.");
    await onChanged();
  }

  const label = perMember ? 'Disconnect your account' : "Disconnect the organization's account";
  return (
    <div>
      <button type="button" class="secondary" onClick={() => setAsking(true)}>
        {label}
      </button>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
      {asking && (
        <ConfirmDialog
          title={`${label}?`}
          message={
            perMember
              ? 'Your stored credential is deleted; your workspaces cannot use this connection until you connect again.'
              : "The organization's credential is deleted; nobody can use this connection until an admin connects it again."
          }
          confirmLabel="Disconnect"
          onConfirm={disconnect}
          onCancel={() => setAsking(false)}
        />
      )}
    </div>
  );
}
