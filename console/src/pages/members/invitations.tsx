import { useState } from 'preact/hooks';
import { api, errorMessage, fieldErrors, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';

type Invitation = components['schemas']['Invitation'];

export function InvitationsPage({ organizationId }: { organizationId: string }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const path = { organizationId };
  const list = useQuery(
    () => api.GET('/v1/orgs/{organizationId}/invitations', { params: { path } }),
    [organizationId],
    {
      select: (data) => data.invitations,
    },
  );
  const invitations = list.data ?? null;
  const status = useStatus();
  const invite = useMutation(
    () => api.POST('/v1/orgs/{organizationId}/invitations', { params: { path }, body: { email, role } }),
    {
      status,
      success: `Invitation sent to ${email}.`,
      onSuccess: () => {
        setEmail('');
        return list.refetch();
      },
    },
  );
  const revoke = useMutation(
    (invitation: Invitation) =>
      api.DELETE('/v1/orgs/{organizationId}/invitations/{invitationId}', {
        params: { path: { organizationId, invitationId: invitation.id } },
      }),
    {
      status,
      success: (_, invitation) => `The invitation of ${invitation.email} was revoked.`,
      onSuccess: list.refetch,
    },
  );
  const formError = invite.error;
  const loadError = revoke.error ?? list.error;

  return (
    <section aria-labelledby="invitations-heading">
      <h1 id="invitations-heading">Invitations</h1>
      <form class="inline-form" onSubmit={submitted(invite.mutate)} noValidate aria-label="Invite a person">
        <Field
          label="Email to invite"
          name="email"
          type="email"
          value={email}
          onInput={setEmail}
          error={formError}
          autoComplete="off"
        />
        <div class="field">
          <label for="invite-role">Role</label>
          <select
            id="invite-role"
            value={role}
            onChange={(event) => setRole((event.target as HTMLSelectElement).value as 'member' | 'admin')}
          >
            <option value="member">Member</option>
            <option value="admin">Admin</option>
          </select>
          {fieldErrors(formError, 'role').map((message) => (
            <p class="field-error">{message}</p>
          ))}
        </div>
        <button type="submit">Invite</button>
      </form>
      <FormError error={formError} />
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {invitations === null && !loadError && <p>Loading invitations…</p>}
      {invitations?.length === 0 && (
        <p>No pending invitations. Invite a person by e-mail above; they join when they accept.</p>
      )}
      {invitations && invitations.length > 0 && (
        <table>
          <caption class="visually-hidden">Pending invitations</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((invitation) => (
              <tr key={invitation.id}>
                <td>{invitation.email}</td>
                <td>{invitation.role}</td>
                <td>{new Date(invitation.expiresAt).toLocaleDateString()}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Revoke the invitation of ${invitation.email}`}
                    onClick={() => setRevoking(invitation)}
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
          title="Revoke this invitation?"
          message={`${revoking.email} will no longer be able to join with it.`}
          confirmLabel="Revoke invitation"
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
