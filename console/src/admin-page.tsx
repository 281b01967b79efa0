// What the pages only owners and admins use (SSO, SCIM, the audit stream) show before they have their
// resource (which they read with useQuery's `absent`: the organization may not have one yet).
import type { ComponentChildren } from 'preact';
import { api, errorMessage, type ApiError } from './api.ts';
import { useQuery } from './data.ts';

interface StatusProps {
  organizationId: string;
  heading: ComponentChildren;
  /** What the page manages, for a member's sentence: "Only owners and admins manage {what}." */
  what: string;
  loadError: ApiError | undefined;
  loading: boolean;
  children: ComponentChildren;
}

/** The page, or before it: who manages it (to a member, whom the API refuses), the error, or that it loads. */
export function AdminPage({ organizationId, heading, what, loadError, loading, children }: StatusProps) {
  if (loadError?.error === 'forbidden')
    return (
      <>
        {heading}
        <ManagedBy organizationId={organizationId} what={what} />
      </>
    );
  if (loadError)
    return (
      <>
        {heading}
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      </>
    );
  if (loading)
    return (
      <>
        {heading}
        <p>Loading…</p>
      </>
    );
  return (
    <>
      {heading}
      {children}
    </>
  );
}

/**
 * For a member: who the owners and admins are, by name, so the member knows whom to ask (every member
 * may read the member list).
 */
function ManagedBy({ organizationId, what }: { organizationId: string; what: string }) {
  const read = useQuery(
    () => api.GET('/v1/orgs/{organizationId}/members', { params: { path: { organizationId } } }),
    [organizationId],
    { select: (data) => data.members.filter((member) => member.role === 'owner' || member.role === 'admin') },
  );
  const managers = read.data ?? (read.error ? [] : null);
  return (
    <div class="managed-by">
      <p>Only owners and admins manage {what}.</p>
      {managers && managers.length > 0 && (
        <>
          <p>Ask one of them:</p>
          <ul>
            {managers.map((member) => (
              <li key={member.id}>
                {member.name} ({member.email}), {member.role}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
