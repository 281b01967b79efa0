import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, fieldErrors, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useList, useMutation, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { RoleOptions, roleName, useRoles } from '../../roles.tsx';

type ApiKey = components['schemas']['ApiKey'];

export function ApiKeysPage({ organizationId }: { organizationId: string }) {
  const [name, setName] = useState('');
  // 'member', 'admin' or a custom role's id.
  const [role, setRole] = useState('member');
  const roles = useRoles(organizationId);
  // The key itself, shown once right after it was created; the API never answers it again.
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const path = { organizationId };
  useEffect(() => setCreated(null), [organizationId]);
  const list = useList(
    (cursor) => api.GET('/v1/orgs/{organizationId}/api-keys', { params: { path, query: { limit: 100, cursor } } }),
    (page) => page.apiKeys,
    [organizationId],
  );
  const keys = list.items ?? null;
  const status = useStatus();
  const create = useMutation(
    () => api.POST('/v1/orgs/{organizationId}/api-keys', { params: { path }, body: { name, role } }),
    {
      status,
      progress: 'Creating the key…',
      onSuccess: (data) => {
        setCreated({ name: data.apiKey.name, key: data.key });
        setName('');
        return list.reload();
      },
    },
  );
  const revoke = useMutation(
    (key: ApiKey) =>
      api.DELETE('/v1/orgs/{organizationId}/api-keys/{apiKeyId}', {
        params: { path: { organizationId, apiKeyId: key.id } },
      }),
    {
      status,
      progress: (key) => `Revoking ${key.name}…`,
      success: (_, key) => `${key.name} was revoked; requests with it are refused from now on.`,
      onSuccess: () => list.reload(),
    },
  );
  const busy = create.pending || revoke.pending;
  const formError = create.error;
  const loadError = revoke.error ?? list.error;

  // Members may not manage keys: the list answers 403, and the page says so instead of offering a form.
  if (loadError?.error === 'forbidden' && keys === null) {
    return (
      <section aria-labelledby="keys-heading">
        <h1 id="keys-heading">API keys</h1>
        <p>Only owners and admins manage API keys. Ask one of them if a script or integration needs a key.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="keys-heading">
      <h1 id="keys-heading">API keys</h1>
      <p>
        Keys let scripts and integrations call the API as this organization (header <code>x-api-key</code>).
      </p>
      <form class="inline-form" onSubmit={submitted(create.mutate)} noValidate aria-label="Create an API key">
        <Field label="Key name" name="name" value={name} onInput={setName} error={formError} autoComplete="off" />
        <div class="field">
          <label for="key-role">Key role</label>
          <select id="key-role" value={role} onChange={(event) => setRole((event.target as HTMLSelectElement).value)}>
            <RoleOptions roles={roles.data} />
          </select>
          {fieldErrors(formError, 'role').map((message) => (
            <p class="field-error">{message}</p>
          ))}
        </div>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <FormError error={formError} />
      {created && (
        <section class="secret" aria-label="New API key">
          <p>
            <strong>Copy the key {created.name} now: you will not see it again.</strong> Store it where your script
            reads its secrets.
          </p>
          <CopyField label="API key" id="new-api-key" value={created.key} />
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </section>
      )}
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {keys === null && !loadError && <p>Loading API keys…</p>}
      {keys?.length === 0 && (
        <p>No API keys yet. Create one above for each script or integration, so each can be revoked alone.</p>
      )}
      {keys && keys.length > 0 && (
        <table>
          <caption class="visually-hidden">Active API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>{roleName(roles.data, key.role)}</td>
                <td>{new Date(key.createdAt).toLocaleDateString()}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={busy}
                    aria-label={`Revoke ${key.name}`}
                    onClick={() => setRevoking(key)}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          message="Every script or integration using this key is refused from now on. This cannot be undone; create a new key to replace it."
          confirmLabel="Revoke key"
          onConfirm={() => {
            setRevoking(null);
            void revoke.mutate(revoking);
          }}
          onCancel={() => setRevoking(null)}
        />
      )}
    </section>
  );
}
