import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, fieldErrors, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useMutation, useQuery, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { RoleOptions, roleName, useRoles } from '../../roles.tsx';

type Invitation = components['schemas']['Invitation'];
type Delivery = 'sent' | 'not_configured' | 'failed';

/** An invitation just sent or resent: its link, shown once (the API never answers it again), and its e-mail's fate. */
interface Sent {
  email: string;
  acceptUrl: string;
  delivery: Delivery;
  resent: boolean;
}

const deliveryText: Record<Delivery, (email: string) => string> = {
  sent: (email) => `The invitation was e-mailed to ${email}.`,
  not_configured: (email) =>
    `E-mail is not set up on this instance, so nothing was sent: send ${email} the link yourself.`,
  failed: (email) =>
    `The e-mail to ${email} could not be sent (the mail server refused it or could not be reached). The invitation stands: send the link yourself, or resend later.`,
};

function SentInvitation({ sent, onDone }: { sent: Sent; onDone: () => void }) {
  return (
    <section class="secret" aria-label="Invitation link">
      <p>{deliveryText[sent.delivery](sent.email)}</p>
      <p>
        <strong>Copy the invitation link now if you need it: you will not see it again.</strong>{' '}
        {sent.resent ? 'The link sent before no longer works. ' : ''}Anyone with the link can accept as {sent.email}.
      </p>
      <CopyField label="Invitation link" id="new-invitation-link" value={sent.acceptUrl} />
      <button type="button" class="secondary" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

export function InvitationsPage({ organizationId }: { organizationId: string }) {
  const [email, setEmail] = useState('');
  // 'member', 'admin' or a custom role's id.
  const [role, setRole] = useState('member');
  const roles = useRoles(organizationId);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const [sent, setSent] = useState<Sent | null>(null);
  const path = { organizationId };
  useEffect(() => setSent(null), [organizationId]);
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
      success: (data) => `Invitation created for ${data.invitation.email}.`,
      onSuccess: (data) => {
        setEmail('');
        setSent({
          email: data.invitation.email,
          acceptUrl: data.acceptUrl,
          delivery: data.delivery.email,
          resent: false,
        });
        return list.refetch();
      },
    },
  );
  const resend = useMutation(
    (invitation: Invitation) =>
      api.POST('/v1/orgs/{organizationId}/invitations/{invitationId}/resend', {
        params: { path: { organizationId, invitationId: invitation.id } },
      }),
    {
      status,
      progress: (invitation) => `Resending the invitation of ${invitation.email}…`,
      success: (data) => `The invitation of ${data.invitation.email} has a new link.`,
      onSuccess: (data) => {
        setSent({
          email: data.invitation.email,
          acceptUrl: data.acceptUrl,
          delivery: data.delivery.email,
          resent: true,
        });
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
  const loadError = revoke.error ?? resend.error ?? list.error;
  const busy = invite.pending || resend.pending || revoke.pending;

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
            onChange={(event) => setRole((event.target as HTMLSelectElement).value)}
          >
            <RoleOptions roles={roles.data} />
          </select>
          {fieldErrors(formError, 'role').map((message) => (
            <p class="field-error">{message}</p>
          ))}
        </div>
        <button type="submit" disabled={busy}>
          Invite
        </button>
      </form>
      <FormError error={formError} />
      {sent && <SentInvitation sent={sent} onDone={() => setSent(null)} />}
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
                <td>{roleName(roles.data, invitation.role)}</td>
                <td>{new Date(invitation.expiresAt).toLocaleDateString()}</td>
                <td>
                  <div class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy}
                      aria-label={`Resend the invitation of ${invitation.email}`}
                      onClick={() => void resend.mutate(invitation)}
                    >
                      Resend
                    </button>
                    <button
                      type="button"
                      class="danger"
                      disabled={busy}
                      aria-label={`Revoke the invitation of ${invitation.email}`}
                      onClick={() => setRevoking(invitation)}
                    >
                      Revoke
                    </button>
                  </div>
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
