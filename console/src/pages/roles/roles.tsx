// The Roles page: the permission catalog, the built-in roles (read-only) and the custom ones with their
// keys and member counts, a custom role's editor for holders of roles.manage (create, change, rename,
// delete), and "why can this person do this". Every member may read it; the API judges each change.
import { useState } from 'preact/hooks';
import { type ApiError, api, errorMessage } from '../../api.ts';
import { useCaller } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery, useStatus } from '../../data.ts';
import { type Role, useMyPermissions, useRoles } from '../../roles.tsx';
import { Catalog, useCatalog } from './catalog.tsx';
import { type RoleDraft, RoleEditor } from './role-editor.tsx';
import { WhyPanel } from './why.tsx';

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What role_in_use's `usedBy` counts, in words: "2 members and 1 API key". */
function describeUses(error: ApiError): string | undefined {
  const usedBy = error.usedBy;
  if (error.error !== 'role_in_use' || typeof usedBy !== 'object' || usedBy === null) return undefined;
  const count = (name: string) => {
    const value = (usedBy as Record<string, unknown>)[name];
    return typeof value === 'number' ? value : value === true ? 1 : 0;
  };
  const uses = [
    [count('members'), 'member', 'members'],
    [count('invitations'), 'pending invitation', 'pending invitations'],
    [count('apiKeys'), 'API key', 'API keys'],
    [count('teams'), 'team', 'teams'],
  ] as const;
  const words = uses.filter(([n]) => n > 0).map(([n, one, many]) => plural(n, one, many));
  if (count('ssoProvisioning') > 0) words.push("SSO provisioning's default role");
  if (words.length === 0) return undefined;
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

export function RolesPage({ organizationId }: { organizationId: string }) {
  const path = { organizationId };
  const catalog = useCatalog();
  const roles = useRoles(organizationId);
  const mine = useMyPermissions([organizationId]);
  const [caller] = useCaller(organizationId);
  const held = mine.data ?? new Set<string>();
  const manages = held.has('roles.manage');
  const seesOthers = held.has('members.update_role');
  const members = useQuery(() => api.GET('/v1/orgs/{organizationId}/members', { params: { path } }), [organizationId], {
    select: (data) => data.members,
  });
  // The editor's role: undefined for a new one; null when closed.
  const [editing, setEditing] = useState<Role | undefined | null>(null);
  const [deleting, setDeleting] = useState<Role | null>(null);
  const status = useStatus();

  const save = useMutation(
    (draft: RoleDraft) =>
      editing
        ? api.PATCH('/v1/orgs/{organizationId}/roles/{roleId}', {
            params: { path: { organizationId, roleId: editing.id } },
            body: draft,
          })
        : api.POST('/v1/orgs/{organizationId}/roles', { params: { path }, body: draft }),
    {
      status,
      progress: (draft) => `Saving ${draft.name}…`,
      success: (_, draft) => `${draft.name} is saved; its holders have its keys from their next request.`,
      onSuccess: async () => {
        await roles.refetch();
        setEditing(null);
      },
    },
  );
  const remove = useMutation(
    (role: Role) =>
      api.DELETE('/v1/orgs/{organizationId}/roles/{roleId}', { params: { path: { organizationId, roleId: role.id } } }),
    {
      status,
      progress: (role) => `Deleting ${role.name}…`,
      success: (_, role) => `${role.name} was deleted.`,
      onSuccess: () => roles.refetch(),
    },
  );
  const busy = save.pending || remove.pending;
  const loadError = catalog.error ?? roles.error;
  const uses = remove.error && describeUses(remove.error);
  const self = members.data?.filter((member) => member.id === caller?.id) ?? [];
  const whom = seesOthers ? (members.data ?? []) : self;

  return (
    <section aria-labelledby="roles-heading">
      <div class="page-head">
        <h1 id="roles-heading">Roles</h1>
        {manages && editing === null && (
          <button type="button" onClick={() => setEditing(undefined)} disabled={busy || !catalog.data}>
            New role
          </button>
        )}
      </div>
      <p>
        A role is a set of permission keys. Members, invitations, API keys and teams are given a role; a person holds
        their own role's keys and their teams'.
      </p>
      {!manages && mine.data && <p class="note">Only holders of roles.manage create and change roles.</p>}
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {remove.error && (
        <p role="alert" class="form-error">
          {errorMessage(remove.error)}
          {uses && ` It is still given to ${uses}.`}
        </p>
      )}
      {editing !== null && catalog.data && (
        <RoleEditor
          key={editing?.id ?? 'new'}
          role={editing}
          catalog={catalog.data}
          held={held}
          error={save.error}
          busy={busy}
          onSave={save.mutate}
          onCancel={() => {
            save.reset();
            setEditing(null);
          }}
        />
      )}
      {!roles.data && !loadError && <p aria-live="polite">Loading roles…</p>}
      {roles.data && (
        <ul class="roles">
          {roles.data.map((role) => (
            <li key={role.id} class="card" aria-labelledby={`role-${role.id}`}>
              <div class="role-head">
                <h2 id={`role-${role.id}`}>{role.name}</h2>
                <span class="muted">
                  {role.builtIn ? 'Built-in' : 'Custom'} · {plural(role.memberCount, 'member', 'members')}
                </span>
                {manages && !role.builtIn && (
                  <div class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy}
                      aria-label={`Edit ${role.name}`}
                      onClick={() => {
                        save.reset();
                        setEditing(role);
                      }}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="danger"
                      disabled={busy}
                      aria-label={`Delete ${role.name}`}
                      onClick={() => setDeleting(role)}
                    >
                      Delete
                    </button>
                  </div>
                )}
              </div>
              {role.description && <p>{role.description}</p>}
              <details>
                <summary>
                  {plural(role.permissions.length, 'key', 'keys')}
                  <span class="visually-hidden"> of {role.name}</span>
                </summary>
                <ul class="keys" aria-label={`Keys of ${role.name}`}>
                  {role.permissions.map((key) => (
                    <li key={key}>
                      <code>{key}</code>
                    </li>
                  ))}
                </ul>
              </details>
            </li>
          ))}
        </ul>
      )}
      {catalog.data && whom.length > 0 && caller && (
        <WhyPanel organizationId={organizationId} members={whom} catalog={catalog.data} initial={caller.id} />
      )}
      {catalog.data && <Catalog permissions={catalog.data} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          message="The role goes for good. A role still given to members, invitations, API keys or teams cannot be deleted: give them another role first."
          confirmLabel="Delete role"
          onConfirm={() => {
            const role = deleting;
            setDeleting(null);
            void remove.mutate(role);
          }}
          onCancel={() => setDeleting(null)}
        />
      )}
    </section>
  );
}
