// What the pages only owners and admins use (SSO, SCIM, the audit stream) share: reading a resource the
// organization may not have yet, and what they show before they have it.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError, type Member } from './api.ts';

/**
 * Settles a GET of a resource the organization may not have yet: `set` gets it, or null when the API
 * answered `absent` (such as sso_connection_not_found); any other error goes to `fail`.
 */
export function settle<T>(
  answer: { data?: T; error?: unknown },
  absent: string,
  set: (value: T | null) => void,
  fail: (error: ApiError) => void,
): T | null {
  if (answer.data) {
    set(answer.data);
    return answer.data;
  }
  const error = answer.error as ApiError;
  if (error.error === absent) set(null);
  else fail(error);
  return null;
}

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
  const [managers, setManagers] = useState<Member[] | null>(null);
  useEffect(() => {
    void (async () => {
      const answer = await api.GET('/v1/orgs/{organizationId}/members', { params: { path: { organizationId } } });
      setManagers(answer.data?.members.filter((member) => member.role === 'owner' || member.role === 'admin') ?? []);
    })();
  }, [organizationId]);
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
