// Storing an API key (PUT .../credentials: one's own on per-member connections, the shared one for
// admins; probed first) and disconnecting (DELETE .../credentials), after a confirmation.
import { useState } from 'preact/hooks';
import { api, errorMessage, fieldErrors } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation } from '../../data.ts';
import { submitted } from '../../forms.tsx';
import { diagnosticOf, DiagnosticView, type Connection } from './mcp-parts.tsx';

interface Props {
  connection: Connection;
  isAdmin: boolean;
  onChanged: () => Promise<void>;
}

export function ApiKeyForm({ connection, isAdmin, onChanged }: Props) {
  const [apiKey, setApiKey] = useState('');
  const store = useMutation(
    () =>
      api.PUT('/v1/mcp-connections/{connectionId}/credentials', {
        params: { path: { connectionId: connection.id } },
        body: { apiKey },
      }),
    {
      progress: 'Checking the key against the server…',
      success: 'The key passed the check and is stored.',
      // The page reads the connection again after saying so.
      onSuccess: () => {
        setApiKey('');
        void onChanged();
      },
    },
  );
  const { pending: busy, error } = store;
  const perMember = connection.credentialMode === 'per_member';
  if (!perMember && !isAdmin) return null;

  const diagnostic = diagnosticOf(error);
  const messages = fieldErrors(error, 'apiKey');
  return (
    <form
      class="inline-form"
      onSubmit={submitted(store.mutate)}
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
        {store.status}
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
  const perMember = connection.credentialMode === 'per_member';
  const disconnecting = useMutation(
    () =>
      api.DELETE('/v1/mcp-connections/{connectionId}/credentials', {
        params: { path: { connectionId: connection.id } },
      }),
    {
      success: perMember ? 'Your credential was deleted.' : "The organization's credential was deleted.",
      onSuccess: () => void onChanged(),
    },
  );
  const { error, status } = disconnecting;
  if (connection.authType === 'none' || !connection.connectedForMe || (!perMember && !isAdmin))
    return status ? <p role="status">{status}</p> : null;

  const disconnect = () => {
    setAsking(false);
    void disconnecting.mutate();
  };

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
