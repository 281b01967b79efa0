// Who may use a connection: the whole organization, or the members and teams ticked here.
import { api, errorMessage, type ApiError } from '../../api.ts';
import { useList } from '../../data.ts';
import { messagesUnder } from './mcp-form.tsx';
import type { AccessInput } from './mcp-parts.tsx';

export interface Access {
  orgWide: boolean;
  memberIds: string[];
  teamIds: string[];
}

export const orgWideAccess: Access = { orgWide: true, memberIds: [], teamIds: [] };

export function accessOf(access: AccessInput | null | undefined): Access {
  return { orgWide: access?.orgWide ?? false, memberIds: access?.memberIds ?? [], teamIds: access?.teamIds ?? [] };
}

/** The body's access: specific ids only when not organization-wide (the API would keep them otherwise). */
export function accessBody(access: Access): Access {
  return access.orgWide ? orgWideAccess : access;
}

interface Props {
  organizationId: string;
  access: Access;
  onChange: (access: Access) => void;
  error: ApiError | undefined;
  /** The form's own field path of the access object: `access` in both bodies. */
  path?: string;
}

export function AccessEditor({ organizationId, access, onChange, error, path = 'access' }: Props) {
  // Every page of both lists: a person not listed could not be granted access here.
  const params = (cursor: string | undefined) => ({ path: { organizationId }, query: { limit: 100, cursor } });
  const memberList = useList(
    (cursor) => api.GET('/v1/orgs/{organizationId}/members', { params: params(cursor) }),
    (page) => page.members,
    [organizationId],
  );
  const teamList = useList(
    (cursor) => api.GET('/v1/orgs/{organizationId}/teams', { params: params(cursor) }),
    (page) => page.teams,
    [organizationId],
  );
  const members = memberList.items ?? null;
  const teams = teamList.items ?? null;
  const loadError = memberList.error ?? teamList.error;

  const toggle = (key: 'memberIds' | 'teamIds', id: string, on: boolean) =>
    onChange({ ...access, [key]: on ? [...access[key], id] : access[key].filter((existing) => existing !== id) });
  const messages = messagesUnder(error, path);

  return (
    <fieldset class="access" aria-describedby={messages.length > 0 ? 'access-error' : undefined}>
      <legend>Who may use it</legend>
      <label class="choice">
        <input
          type="radio"
          name="access-scope"
          checked={access.orgWide}
          onChange={() => onChange({ ...access, orgWide: true })}
        />
        Everyone in the organization
      </label>
      <label class="choice">
        <input
          type="radio"
          name="access-scope"
          checked={!access.orgWide}
          onChange={() => onChange({ ...access, orgWide: false })}
        />
        Only the members and teams chosen below
      </label>
      {messages.length > 0 && (
        <p id="access-error" class="field-error">
          {messages.join(' ')}
        </p>
      )}
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {!access.orgWide && (
        <div class="access-lists">
          <fieldset>
            <legend>Members</legend>
            {members === null && !loadError && <p>Loading members…</p>}
            {members?.map((member) => (
              <label class="choice" key={member.id}>
                <input
                  type="checkbox"
                  checked={access.memberIds.includes(member.id)}
                  onChange={(event) => toggle('memberIds', member.id, (event.target as HTMLInputElement).checked)}
                />
                {member.name} ({member.email})
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Teams</legend>
            {teams?.length === 0 && <p>No teams yet: create one on the Teams page to grant a group at once.</p>}
            {teams?.map((team) => (
              <label class="choice" key={team.id}>
                <input
                  type="checkbox"
                  checked={access.teamIds.includes(team.id)}
                  onChange={(event) => toggle('teamIds', team.id, (event.target as HTMLInputElement).checked)}
                />
                {team.name}
              </label>
            ))}
          </fieldset>
          {access.memberIds.length === 0 && access.teamIds.length === 0 && (
            <p class="note">No member or team is chosen yet: tick the ones who may use it.</p>
          )}
        </div>
      )}
    </fieldset>
  );
}
