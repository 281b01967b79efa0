// "Why can this person do this": a member's keys, each with the role or team that grants it
// (GET .../members/{memberId}/permissions). Holders of members.update_role pick anyone; others see their own.
import { useState } from 'preact/hooks';
import { api, errorMessage, type Member } from '../../api.ts';
import { useQuery } from '../../data.ts';
import { areaLabel, byArea, type Permission } from './catalog.tsx';

interface WhyProps {
  organizationId: string;
  /** Whom the picker offers (only oneself without members.update_role). */
  members: Member[];
  catalog: Permission[];
  initial: string;
}

export function WhyPanel({ organizationId, members, catalog, initial }: WhyProps) {
  const [memberId, setMemberId] = useState(initial);
  const read = useQuery(
    () =>
      api.GET('/v1/orgs/{organizationId}/members/{memberId}/permissions', {
        params: { path: { organizationId, memberId } },
      }),
    [organizationId, memberId],
    { select: (data) => new Map(data.permissions.map((permission) => [permission.key, permission.grantedBy])) },
  );
  const member = members.find((candidate) => candidate.id === memberId);
  const held = read.data;
  const shown = catalog.filter((permission) => held?.has(permission.key));

  return (
    <section aria-labelledby="why-heading" class="card">
      <h2 id="why-heading">Why can this person do this?</h2>
      <div class="field">
        <label for="why-member">Member</label>
        <select
          id="why-member"
          value={memberId}
          onChange={(event) => setMemberId((event.target as HTMLSelectElement).value)}
        >
          {members.map((candidate) => (
            <option key={candidate.id} value={candidate.id}>
              {candidate.name} ({candidate.email})
            </option>
          ))}
        </select>
      </div>
      {read.error && (
        <p role="alert" class="form-error">
          {errorMessage(read.error)}
        </p>
      )}
      {!held && !read.error && <p aria-live="polite">Reading their keys…</p>}
      {held && shown.length === 0 && <p>{member?.name ?? 'This member'} holds no keys.</p>}
      {held && shown.length > 0 && (
        <table class="why">
          <caption class="visually-hidden">Keys of {member?.email ?? 'the member'} and where each comes from</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Area</th>
              <th scope="col">Granted by</th>
            </tr>
          </thead>
          <tbody>
            {byArea(shown).flatMap(([area, permissions]) =>
              permissions.map((permission) => (
                <tr key={permission.key}>
                  <td data-label="Key">
                    <code>{permission.key}</code>
                  </td>
                  <td data-label="Area">{areaLabel(area)}</td>
                  <td data-label="Granted by">
                    {(held.get(permission.key) ?? [])
                      .map((source) => `${source.type === 'team' ? 'team' : 'role'} ${source.name}`)
                      .join(', ')}
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}
