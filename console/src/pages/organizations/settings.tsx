// The active organization's settings: its name (owners and admins rename it, PATCH /v1/orgs/{id}),
// leaving it (any member but the owner, DELETE of one's own member record) and deleting it (the owner,
// after typing its name, DELETE /v1/orgs/{id}).
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { isManager } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { Link, navigate } from '../../router.tsx';

interface Props {
  organizationId: string;
  /** Reads the person's organizations again (the shell's picker shows the new name, or the one left). */
  onOrganizationsChanged: () => Promise<unknown>;
}

export function OrganizationSettingsPage({ organizationId, onOrganizationsChanged }: Props) {
  const read = useQuery(() => api.GET('/v1/org'), [organizationId]);
  const org = read.data;
  const heading = <h1>Organization settings</h1>;
  if (read.error)
    return (
      <section>
        {heading}
        <p role="alert" class="form-error">
          {errorMessage(read.error)}
        </p>
      </section>
    );
  if (!org || org.organization.id !== organizationId)
    return (
      <section>
        {heading}
        <p>Loading…</p>
      </section>
    );
  const me = org.currentMember;
  return (
    <section>
      {heading}
      <dl class="summary">
        <dt>Name</dt>
        <dd>{org.organization.name}</dd>
        <dt>Owner</dt>
        <dd>
          {org.organization.owner.name} ({org.organization.owner.email})
        </dd>
        <dt>Plan</dt>
        <dd>{org.organization.plan}</dd>
        <dt>Your role</dt>
        <dd>{me.role}</dd>
      </dl>
      {isManager(me) ? (
        <RenameForm
          organizationId={organizationId}
          current={org.organization.name}
          onRenamed={async () => {
            await Promise.all([read.refetch(), onOrganizationsChanged()]);
          }}
        />
      ) : (
        <p>Only owners and admins rename the organization.</p>
      )}
      {me.role === 'owner' ? (
        <>
          <section aria-labelledby="leave-heading">
            <h2 id="leave-heading">Leave</h2>
            <p>
              The owner cannot leave: first <Link href="/members">transfer ownership</Link> to another member.
            </p>
          </section>
          <DeleteSection
            organizationId={organizationId}
            name={org.organization.name}
            onDeleted={onOrganizationsChanged}
          />
        </>
      ) : (
        <LeaveSection
          organizationId={organizationId}
          memberId={me.id}
          name={org.organization.name}
          onLeft={onOrganizationsChanged}
        />
      )}
    </section>
  );
}

function RenameForm(props: { organizationId: string; current: string; onRenamed: () => Promise<void> }) {
  const [name, setName] = useState(props.current);
  const renaming = useMutation(
    () =>
      api.PATCH('/v1/orgs/{organizationId}', {
        params: { path: { organizationId: props.organizationId } },
        body: { name },
      }),
    {
      progress: 'Renaming…',
      onSuccess: props.onRenamed,
      success: (data) => `Renamed to ${data.organization.name}.`,
    },
  );
  return (
    <section aria-labelledby="rename-heading">
      <h2 id="rename-heading">Rename</h2>
      <form onSubmit={submitted(renaming.mutate)} noValidate>
        <Field label="Organization name" name="name" value={name} onInput={setName} error={renaming.error} />
        <FormError error={renaming.error} />
        <p role="status">{renaming.status}</p>
        <button type="submit" disabled={renaming.pending || name.trim() === props.current}>
          Rename
        </button>
      </form>
    </section>
  );
}

function LeaveSection(props: {
  organizationId: string;
  memberId: string;
  name: string;
  onLeft: () => Promise<unknown>;
}) {
  const [asking, setAsking] = useState(false);
  const leaving = useMutation(
    () =>
      api.DELETE('/v1/orgs/{organizationId}/members/{memberId}', {
        params: { path: { organizationId: props.organizationId, memberId: props.memberId } },
      }),
    {
      progress: 'Leaving…',
      onSuccess: async () => {
        await props.onLeft();
        navigate('/');
      },
    },
  );
  return (
    <section aria-labelledby="leave-heading">
      <h2 id="leave-heading">Leave</h2>
      <p>You lose access to {props.name} at once; only a new invitation brings you back.</p>
      <FormError error={leaving.error} />
      <p role="status">{leaving.status}</p>
      <button type="button" class="danger" disabled={leaving.pending} onClick={() => setAsking(true)}>
        Leave organization
      </button>
      {asking && (
        <ConfirmDialog
          title={`Leave ${props.name}?`}
          message="You lose access to this organization at once. Only an owner or admin can invite you back."
          confirmLabel="Leave organization"
          onConfirm={() => {
            setAsking(false);
            void leaving.mutate();
          }}
          onCancel={() => setAsking(false)}
        />
      )}
    </section>
  );
}

function DeleteSection(props: { organizationId: string; name: string; onDeleted: () => Promise<unknown> }) {
  const [typed, setTyped] = useState('');
  const deleting = useMutation(
    () =>
      api.DELETE('/v1/orgs/{organizationId}', {
        params: { path: { organizationId: props.organizationId } },
        body: { confirm: typed },
      }),
    {
      progress: 'Deleting…',
      onSuccess: async () => {
        await props.onDeleted();
        navigate('/');
      },
    },
  );
  return (
    <section aria-labelledby="delete-heading" class="danger-zone standalone">
      <h2 id="delete-heading">Delete organization</h2>
      <p>
        This deletes {props.name} and everything in it, for everyone, at once: its members, teams, invitations, API
        keys, install links, MCP connections and their credentials, SSO and SCIM, bots, the memory kept in it, and its
        audit log. It cannot be undone.
      </p>
      <form onSubmit={submitted(deleting.mutate)} noValidate>
        <Field
          label={`Type ${props.name} to confirm`}
          name="confirm"
          value={typed}
          onInput={setTyped}
          error={deleting.error}
          autoComplete="off"
        />
        <FormError error={deleting.error} />
        <p role="status">{deleting.status}</p>
        <button type="submit" class="danger" disabled={deleting.pending || typed.trim() !== props.name}>
          Delete organization
        </button>
      </form>
    </section>
  );
}
