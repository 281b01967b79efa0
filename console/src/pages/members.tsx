import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError, type Member } from '../api.ts';

export function MembersPage({ organizationId }: { organizationId: string }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [error, setError] = useState<ApiError>();

  useEffect(() => {
    setMembers(null);
    api.GET('/v1/orgs/{organizationId}/members', { params: { path: { organizationId } } }).then((answer) => {
      if (answer.data) setMembers(answer.data.members);
      else setError(answer.error as ApiError);
    });
  }, [organizationId]);

  return (
    <section aria-labelledby="members-heading">
      <h1 id="members-heading">Members</h1>
      {error && <p role="alert" class="form-error">{errorMessage(error)}</p>}
      {members === null && !error && <p aria-live="polite">Loading members…</p>}
      {members && (
        <table>
          <caption class="visually-hidden">Members of this organization</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th></tr></thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.id}><td>{member.name}</td><td>{member.email}</td><td>{member.role}</td><td>{member.status}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
