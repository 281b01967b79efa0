// The organization's roles and the signed-in person's keys, shared by the pages that give a role
// (members, invitations, API keys), the Roles page and the navigation. A role is a built-in name or a
// custom role's id: people see names, the API gets ids.
import { api, type components } from './api.ts';
import { useQuery } from './data.ts';

export type Role = components['schemas']['Role'];
export type PermissionKey = Role['permissions'][number];

/** Every role of the organization: the built-in ones first, then the custom ones by name (as the API lists them). */
export function useRoles(organizationId: string) {
  return useQuery(
    // No organization (yet): no roles to read.
    async () =>
      organizationId
        ? api.GET('/v1/orgs/{organizationId}/roles', { params: { path: { organizationId } } })
        : { data: { roles: [] as Role[] } },
    [organizationId],
    { select: (data) => data.roles },
  );
}

/**
 * The keys the signed-in person holds in the active organization (GET /v1/me/permissions), undefined
 * until it answers. `deps` reads it again (another organization, another role).
 */
export function useMyPermissions(deps: unknown[]) {
  return useQuery(() => api.GET('/v1/me/permissions'), deps, {
    select: (data) => new Set<string>(data.permissions.map((permission) => permission.key)),
  });
}

/** A role's name for people: a custom role's name, or the built-in's; an id not (yet) listed as it is. */
export function roleName(roles: Role[] | undefined, id: string): string {
  return roles?.find((role) => role.id === id)?.name ?? id;
}

/** The <option>s of a role picker: every role one may give (the owner's is only ever transferred). */
export function RoleOptions({ roles }: { roles: Role[] | undefined }) {
  const given = roles?.filter((role) => role.id !== 'owner') ?? [
    { id: 'member', name: 'member' },
    { id: 'admin', name: 'admin' },
  ];
  return (
    <>
      {given.map((role) => (
        <option key={role.id} value={role.id}>
          {role.name}
        </option>
      ))}
    </>
  );
}
