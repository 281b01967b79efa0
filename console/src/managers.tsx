import { useEffect, useState } from 'preact/hooks';
import { api, type Member } from './api.ts';

/**
 * For a member on a page only owners and admins use: who those are, by name, so the member knows whom to
 * ask (every member may read the member list).
 */
export function ManagedBy({ organizationId, what }: { organizationId: string; what: string }) {
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
          <ul>{managers.map((member) => <li key={member.id}>{member.name} ({member.email}), {member.role}</li>)}</ul>
        </>
      )}
    </div>
  );
}
