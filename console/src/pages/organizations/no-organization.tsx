// What the shell shows when the session has no organization to show: none at all (create one, or ask
// for an invitation), or some, none of them active (a session that never chose one, or whose active
// one the person left or was removed from): choose one.
import { CreateOrganizationForm } from './new-organization.tsx';

interface Organization {
  id: string;
  name: string;
  role: string;
}

interface Props {
  organizations: Organization[];
  onChoose: (organizationId: string) => void;
  onOrganizationsChanged: () => Promise<unknown>;
  busy: boolean;
}

export function NoOrganization({ organizations, onChoose, onOrganizationsChanged, busy }: Props) {
  if (organizations.length > 0)
    return (
      <section>
        <h1>Choose an organization</h1>
        <ul class="choices">
          {organizations.map((organization) => (
            <li key={organization.id}>
              <button type="button" disabled={busy} onClick={() => onChoose(organization.id)}>
                {organization.name}
              </button>{' '}
              <span>your role: {organization.role}</span>
            </li>
          ))}
        </ul>
        <h2>Or create another</h2>
        <CreateOrganizationForm onOrganizationsChanged={onOrganizationsChanged} />
      </section>
    );
  return (
    <section>
      <h1>Create your first organization</h1>
      <p>
        You are not a member of any organization yet. Create one, or ask an owner of an existing one for an invitation.
      </p>
      <CreateOrganizationForm onOrganizationsChanged={onOrganizationsChanged} />
    </section>
  );
}
