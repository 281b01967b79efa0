// The instance's administrators: add one by the e-mail of an existing account, remove one (never the last).
import { useState } from 'preact/hooks';
import { api, errorMessage, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useList, useMutation, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { AdminRefused } from './refused.tsx';

type Administrator = components['schemas']['InstanceAdministrator'];

export function InstanceAdministratorsPage() {
  const [email, setEmail] = useState('');
  const [removing, setRemoving] = useState<Administrator | null>(null);
  const list = useList(
    async () => {
      const answer = await api.GET('/v1/admin/admins');
      return answer.data ? { ...answer, data: { ...answer.data, nextCursor: null } } : answer;
    },
    (page) => page.admins,
    [],
  );
  const status = useStatus();
  const add = useMutation(() => api.POST('/v1/admin/admins', { body: { email } }), {
    status,
    progress: 'Adding…',
    success: (data) => `${data.admin.email} is an instance administrator.`,
    onSuccess: () => {
      setEmail('');
      return list.reload();
    },
  });
  const remove = useMutation(
    (admin: Administrator) => api.DELETE('/v1/admin/admins/{userId}', { params: { path: { userId: admin.userId } } }),
    {
      status,
      progress: (admin) => `Removing ${admin.email}…`,
      success: (_, admin) => `${admin.email} is no longer an instance administrator.`,
      onSuccess: () => list.reload(),
    },
  );
  const admins = list.items;
  const loadError = remove.error ?? list.error;
  if (list.error?.error === 'forbidden')
    return (
      <section aria-labelledby="admins-heading">
        <h1 id="admins-heading">Administrators</h1>
        <AdminRefused />
      </section>
    );
  return (
    <section aria-labelledby="admins-heading">
      <h1 id="admins-heading">Administrators</h1>
      <p>
        Instance administrators see every organization's plan and counts (never its content) and change plans and
        administrators. Keep at least two.
      </p>
      <form class="inline-form" onSubmit={submitted(add.mutate)} noValidate aria-label="Add an administrator">
        <Field
          label="E-mail of an existing account"
          name="email"
          type="email"
          value={email}
          onInput={setEmail}
          error={add.error}
          autoComplete="off"
        />
        <button type="submit" disabled={add.pending}>
          Add administrator
        </button>
      </form>
      <FormError error={add.error} />
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {!admins && !list.error && <p>Loading…</p>}
      {admins && (
        <ul class="admins">
          {admins.map((admin) => (
            <li key={admin.userId}>
              <span>
                {admin.name} ({admin.email})
              </span>{' '}
              <button
                type="button"
                class="secondary"
                disabled={remove.pending || admins.length === 1}
                title={admins.length === 1 ? 'The last administrator cannot be removed' : undefined}
                onClick={() => setRemoving(admin)}
              >
                Remove {admin.email}
              </button>
            </li>
          ))}
        </ul>
      )}
      {removing && (
        <ConfirmDialog
          title="Remove an administrator"
          message={`${removing.email} will no longer administer this instance. Their account stays.`}
          confirmLabel="Remove"
          onConfirm={() => {
            const admin = removing;
            setRemoving(null);
            void remove.mutate(admin);
          }}
          onCancel={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
