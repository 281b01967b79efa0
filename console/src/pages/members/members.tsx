import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type Member } from '../../api.ts';
import { useCaller } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery } from '../../data.ts';
import { RoleOptions, roleName, useMyPermissions, useRoles } from '../../roles.tsx';

/** A built-in role's name or a custom role's id. */
type Role = string;
type Pending = { kind: 'remove' | 'transfer'; member: Member };
type Change = { progress: string; call: () => Promise<{ error?: unknown }>; done: string; settle?: () => void };

export function MembersPage({ organizationId }: { organizationId: string }) {
  const path = { organizationId };
  const list = useQuery(() => api.GET('/v1/orgs/{organizationId}/members', { params: { path } }), [organizationId], {
    select: (data) => data.members,
  });
  const members = list.data ?? null;
  const [caller, reloadCaller] = useCaller(organizationId);
  const roleList = useRoles(organizationId);
  // The caller's keys, read again when their role changes (a transfer of ownership makes them an admin).
  const held = useMyPermissions([organizationId, caller?.role]);
  const named = (role: Role) => roleName(roleList.data, role);
  // Roles picked in a row's select but not saved yet, by member id.
  const [roles, setRoles] = useState<Record<string, Role>>({});
  const [pending, setPending] = useState<Pending | null>(null);
  useEffect(() => setRoles({}), [organizationId]);

  // The list is read again before the change is announced and the controls come back (useMutation
  // awaits onSuccess), so a pick made after the announcement is never wiped by the reload of the change
  // before it.
  const change = useMutation(
    async ({ call, settle }: Change) => {
      const answer = await call();
      if (answer.error) settle?.();
      return answer;
    },
    {
      progress: ({ progress }) => progress,
      success: (_, { done }) => done,
      onSuccess: async (_, { settle }) => {
        // A role's member count changes with it.
        await Promise.all([list.refetch(), reloadCaller(), roleList.refetch()]);
        settle?.();
      },
    },
  );
  const busy = change.pending;
  const error = change.error ?? list.error;
  const run = (progress: string, call: Change['call'], done: string, settle?: () => void) =>
    change.mutate({ progress, call, done, settle });

  async function saveRole(member: Member, role: Role) {
    await run(
      `Saving the role of ${member.email}…`,
      () =>
        api.PATCH('/v1/orgs/{organizationId}/members/{memberId}', {
          params: { path: { organizationId, memberId: member.id } },
          body: { role },
        }),
      role === 'admin' || role === 'member'
        ? `${member.email} is now ${role === 'admin' ? 'an admin' : 'a member'}.`
        : `${member.email} now has the role ${named(role)}.`,
      () => setRoles(({ [member.id]: _, ...rest }) => rest),
    );
  }

  async function confirmPending() {
    const action = pending;
    if (!action) return;
    setPending(null);
    if (action.kind === 'remove') {
      await run(
        `Removing ${action.member.email}…`,
        () =>
          api.DELETE('/v1/orgs/{organizationId}/members/{memberId}', {
            params: { path: { organizationId, memberId: action.member.id } },
          }),
        `${action.member.email} was removed from the organization.`,
      );
    } else {
      await run(
        `Transferring ownership to ${action.member.email}…`,
        () =>
          api.POST('/v1/orgs/{organizationId}/transfer-ownership', {
            params: { path },
            body: { memberId: action.member.id },
          }),
        `${action.member.email} is now the owner; you are an admin.`,
      );
    }
  }

  const owner = caller?.role === 'owner';
  // What the row offers follows the caller's keys, so a custom role holding them manages as an admin does.
  const changesRoles = held.data?.has('members.update_role') ?? false;
  const removes = held.data?.has('members.remove') ?? false;
  const manager = changesRoles || removes || owner;
  return (
    <section aria-labelledby="members-heading">
      <h1 id="members-heading">Members</h1>
      <p role="status">{change.status}</p>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
      {members === null && !error && <p aria-live="polite">Loading members…</p>}
      {members && (
        <table class="members">
          <caption class="visually-hidden">Members of this organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              {manager && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {members.map((member) => {
              const editable = changesRoles && member.role !== 'owner';
              const picked = roles[member.id];
              return (
                <tr key={member.id}>
                  <td data-label="Name">{member.name}</td>
                  <td data-label="Email">{member.email}</td>
                  <td data-label="Role">
                    {editable ? (
                      <span class="role-edit">
                        <select
                          aria-label={`Role of ${member.email}`}
                          value={picked ?? member.role}
                          disabled={busy}
                          onChange={(event) =>
                            setRoles({ ...roles, [member.id]: (event.target as HTMLSelectElement).value })
                          }
                        >
                          <RoleOptions roles={roleList.data} />
                        </select>
                        {picked && picked !== member.role && (
                          <button
                            type="button"
                            disabled={busy}
                            aria-label={`Save the role of ${member.email}`}
                            onClick={() => saveRole(member, picked)}
                          >
                            Save
                          </button>
                        )}
                      </span>
                    ) : (
                      named(member.role)
                    )}
                  </td>
                  <td data-label="Status">{member.status}</td>
                  {manager && (
                    <td>
                      <div class="row-actions">
                        {owner && member.role !== 'owner' && (
                          <button
                            type="button"
                            class="secondary"
                            disabled={busy}
                            aria-label={`Transfer ownership to ${member.email}`}
                            onClick={() => setPending({ kind: 'transfer', member })}
                          >
                            Transfer ownership
                          </button>
                        )}
                        {removes && member.role !== 'owner' && member.id !== caller?.id && (
                          <button
                            type="button"
                            class="danger"
                            disabled={busy}
                            aria-label={`Remove ${member.email}`}
                            onClick={() => setPending({ kind: 'remove', member })}
                          >
                            Remove
                          </button>
                        )}
                      </div>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {pending?.kind === 'remove' && (
        <ConfirmDialog
          title={`Remove ${pending.member.name}?`}
          message={`${pending.member.email} loses access to this organization at once. They can come back only with a new invitation.`}
          confirmLabel="Remove member"
          onConfirm={confirmPending}
          onCancel={() => setPending(null)}
        />
      )}
      {pending?.kind === 'transfer' && (
        <ConfirmDialog
          title="Transfer ownership?"
          message={`${pending.member.email} becomes the owner of this organization and you become an admin. Only the new owner can transfer it back.`}
          confirmLabel="Transfer ownership"
          onConfirm={confirmPending}
          onCancel={() => setPending(null)}
        />
      )}
    </section>
  );
}
