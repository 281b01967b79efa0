import { useState } from 'preact/hooks';
import { api, errorMessage, type Member, type paths } from '../../api.ts';
import { isManager, useCaller } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useList, useMutation, useQuery, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';

type Team =
  paths['/v1/orgs/{organizationId}/teams']['get']['responses'][200]['content']['application/json']['teams'][number];

// The API has no routes to rename or delete a team yet, so neither is offered here.
export function TeamsPage({ organizationId }: { organizationId: string }) {
  const [caller] = useCaller(organizationId);
  const [name, setName] = useState('');
  const [removing, setRemoving] = useState<{ team: Team; member: Member } | null>(null);
  const path = { organizationId };
  const list = useList(
    (cursor) => api.GET('/v1/orgs/{organizationId}/teams', { params: { path, query: { limit: 100, cursor } } }),
    (page) => page.teams,
    [organizationId],
  );
  const teams = list.items ?? null;
  const people = useQuery(() => api.GET('/v1/orgs/{organizationId}/members', { params: { path } }), [organizationId], {
    select: (data) => data.members,
  });
  const members = people.data ?? [];
  const reload = () => Promise.all([list.reload(), people.refetch()]);
  const status = useStatus();
  const create = useMutation(() => api.POST('/v1/orgs/{organizationId}/teams', { params: { path }, body: { name } }), {
    status,
    progress: 'Creating the team…',
    success: (data) => `Team ${data.team.name} created. Add its members below.`,
    onSuccess: () => {
      setName('');
      return reload();
    },
  });
  const change = useMutation((call: () => Promise<{ error?: unknown }>, _progress: string, _done: string) => call(), {
    status,
    progress: (_, progress) => progress,
    success: (_data, _call, _progress, done) => done,
    onSuccess: reload,
  });
  const busy = create.pending || change.pending;
  const createError = create.error;
  const loadError = change.error ?? list.error;

  const manager = isManager(caller);
  const byId = new Map(members.map((member) => [member.id, member]));
  return (
    <section aria-labelledby="teams-heading">
      <h1 id="teams-heading">Teams</h1>
      {manager && (
        <form class="inline-form" onSubmit={submitted(create.mutate)} noValidate aria-label="Create a team">
          <Field label="Team name" name="name" value={name} onInput={setName} error={createError} autoComplete="off" />
          <button type="submit" disabled={busy}>
            Create team
          </button>
        </form>
      )}
      <FormError error={createError} />
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {teams === null && !loadError && <p>Loading teams…</p>}
      {teams?.length === 0 && (
        <p>
          No teams yet.{' '}
          {manager
            ? 'Create one above, then add members to it: teams decide who may use which connections.'
            : 'Owners and admins create teams.'}
        </p>
      )}
      {teams?.map((team) => (
        <TeamCard
          key={team.id}
          team={team}
          members={team.memberIds.map((id) => byId.get(id)).filter((m): m is Member => !!m)}
          candidates={members.filter((member) => !team.memberIds.includes(member.id))}
          manager={manager}
          busy={busy}
          onAdd={(member) =>
            change.mutate(
              () =>
                api.POST('/v1/orgs/{organizationId}/teams/{teamId}/members', {
                  params: { path: { organizationId, teamId: team.id } },
                  body: { memberId: member.id },
                }),
              `Adding ${member.email} to ${team.name}…`,
              `${member.email} was added to ${team.name}.`,
            )
          }
          onRemove={(member) => setRemoving({ team, member })}
        />
      ))}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.member.name} from ${removing.team.name}?`}
          message={`${removing.member.email} loses what this team gives access to. They stay a member of the organization.`}
          confirmLabel="Remove from team"
          onConfirm={() => {
            const { team, member } = removing;
            setRemoving(null);
            void change.mutate(
              () =>
                api.DELETE('/v1/orgs/{organizationId}/teams/{teamId}/members/{memberId}', {
                  params: { path: { organizationId, teamId: team.id, memberId: member.id } },
                }),
              `Removing ${member.email} from ${team.name}…`,
              `${member.email} was removed from ${team.name}.`,
            );
          }}
          onCancel={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

interface CardProps {
  team: Team;
  members: Member[];
  candidates: Member[];
  manager: boolean;
  busy: boolean;
  onAdd: (member: Member) => void;
  onRemove: (member: Member) => void;
}

function TeamCard({ team, members, candidates, manager, busy, onAdd, onRemove }: CardProps) {
  const [picked, setPicked] = useState('');
  const selectId = `add-to-${team.id}`;
  const headingId = `team-${team.id}`;
  const choice = candidates.find((member) => member.id === picked);
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{team.name}</h2>
      {members.length === 0 ? (
        <p>No members yet.{manager ? ' Add one below.' : ''}</p>
      ) : (
        <ul class="team-members" aria-label={`Members of ${team.name}`}>
          {members.map((member) => (
            <li key={member.id}>
              <span>
                {member.name} <span class="muted">{member.email}</span>
              </span>
              {manager && (
                <button
                  type="button"
                  class="secondary"
                  disabled={busy}
                  aria-label={`Remove ${member.email} from ${team.name}`}
                  onClick={() => onRemove(member)}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {manager && candidates.length > 0 && (
        <form
          class="inline-form"
          aria-label={`Add a member to ${team.name}`}
          onSubmit={(event) => {
            event.preventDefault();
            if (choice) {
              onAdd(choice);
              setPicked('');
            }
          }}
        >
          <div class="field">
            <label for={selectId}>Add to {team.name}</label>
            <select
              id={selectId}
              value={picked}
              onChange={(event) => setPicked((event.target as HTMLSelectElement).value)}
            >
              <option value="">Choose a member…</option>
              {candidates.map((member) => (
                <option key={member.id} value={member.id}>
                  {member.name} ({member.email})
                </option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={busy || !choice} aria-label={`Add the chosen member to ${team.name}`}>
            Add
          </button>
        </form>
      )}
    </section>
  );
}
