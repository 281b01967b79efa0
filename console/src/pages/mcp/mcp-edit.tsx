// The settings form (PUT .../{id}, optimistic concurrency on updatedAt) and the access editor
// (PUT .../access) of one connection.
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { FormError, submitted } from '../../forms.tsx';
import { AccessEditor, accessBody, accessOf, type Access } from './mcp-access.tsx';
import { bodyOf, ConnectionFields, draftOf, type Draft } from './mcp-form.tsx';
import { diagnosticOf, DiagnosticView, type Connection } from './mcp-parts.tsx';

interface EditProps {
  connection: Connection;
  onSaved: (connection: Connection) => void;
  onReload: () => void;
}

export function EditSection({ connection, onSaved, onReload }: EditProps) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(connection));
  const save = useMutation(
    () =>
      api.PUT('/v1/mcp-connections/{connectionId}', {
        params: { path: { connectionId: connection.id } },
        // The access is the one this page read; it has its own editor below.
        body: {
          ...bodyOf(draft, true),
          access: accessBody(accessOf(connection.access)),
          expectedUpdatedAt: connection.updatedAt,
        },
      }),
    {
      progress: 'Saving: a new URL, authentication or API key is checked against the server first…',
      success: (saved) =>
        saved.reconnectionRequired
          ? 'Saved. The server changed, so every stored credential was deleted: connect again before it can be used.'
          : saved.identityChanged
            ? 'Saved. The server changed and passed its check.'
            : 'Saved.',
      onSuccess: (saved) => {
        setDraft(draftOf(saved));
        onSaved(saved);
      },
    },
  );
  const { pending: busy, error } = save;

  const conflict = error?.error === 'connection_conflict';
  const diagnostic = diagnosticOf(error);
  const managedBy = connection.identityManagedBy.map((plugin) => plugin.name);
  return (
    <section aria-labelledby="mcp-edit-heading">
      <h2 id="mcp-edit-heading">Settings</h2>
      <form
        class="mcp-form"
        onSubmit={submitted(save.mutate)}
        noValidate
        aria-label="Connection settings"
        aria-busy={busy}
      >
        <ConnectionFields draft={draft} onChange={setDraft} error={error} editing managedBy={managedBy} />
        {conflict ? (
          <div role="alert" class="conflict">
            <p>Someone else changed this connection after you opened it: {errorMessage(error)}</p>
            <button type="button" class="secondary" onClick={onReload}>
              Reload the connection
            </button>
            <p class="note">Reloading shows their version; your unsaved changes here are discarded.</p>
          </div>
        ) : diagnostic ? (
          <DiagnosticView diagnostic={diagnostic} title="The server did not pass the check; nothing was changed" />
        ) : (
          <FormError error={error} />
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <p role="status" class="progress">
          {save.status}
        </p>
      </form>
    </section>
  );
}

export function AccessSection({
  organizationId,
  connection,
  onSaved,
}: {
  organizationId: string;
  connection: Connection;
  onSaved: (connection: Connection) => void;
}) {
  const [access, setAccess] = useState<Access>(() => accessOf(connection.access));
  const save = useMutation(
    () =>
      api.PUT('/v1/mcp-connections/{connectionId}/access', {
        params: { path: { connectionId: connection.id } },
        body: { access: accessBody(access) },
      }),
    { success: 'Access saved.', onSuccess: onSaved },
  );
  const { pending: busy, error } = save;

  return (
    <section aria-labelledby="mcp-access-heading">
      <h2 id="mcp-access-heading">Access</h2>
      <form onSubmit={submitted(save.mutate)} noValidate aria-label="Access" aria-busy={busy}>
        <AccessEditor organizationId={organizationId} access={access} onChange={setAccess} error={error} />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save access'}
        </button>
        <p role="status">{save.status}</p>
      </form>
    </section>
  );
}
