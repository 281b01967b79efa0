import { Fragment } from 'preact';
import { api, errorMessage, session } from './api.ts';
import { useMutation, useQuery } from './data.ts';
import { NotFoundPage } from './pages/not-found.tsx';
import { Link } from './router.tsx';
import { type Match, sectionOf, sections } from './routes.tsx';

interface ShellProps {
  /** The page at this path (null: none, the not-found page). */
  match: Match | null;
  path: string;
  onSignedOut: () => void;
}

export function Shell({ match, path, onSignedOut }: ShellProps) {
  function signedOut() {
    session.clear();
    onSignedOut();
  }
  const read = useQuery(async () => {
    const answer = await api.GET('/v1/me');
    // The session ended (expired, signed out elsewhere): back to the sign-in page.
    if (answer.response.status === 401) signedOut();
    return answer;
  }, []);
  const me = read.data;
  const switching = useMutation((organizationId: string) =>
    api.PUT('/v1/session/active-organization', { body: { organizationId } }),
  );
  const error = switching.error ?? read.error;

  async function switchOrganization(organizationId: string) {
    await switching.mutate(organizationId);
    // Read again either way: the list of organizations may have changed if the switch was refused.
    await read.refetch();
  }
  async function signOut() {
    await api.POST('/v1/auth/sign-out');
    signedOut();
  }

  if (!me)
    return (
      <main class="auth">
        <p aria-live="polite">{error ? errorMessage(error) : 'Loading…'}</p>
      </main>
    );
  const active = me.organizations.find((organization) => organization.id === me.activeOrganizationId);
  const current = sectionOf(match);

  return (
    <div class="shell">
      <header>
        <Link class="brand" href="/">
          orgplane
        </Link>
        {me.organizations.length > 0 && (
          <label class="switcher">
            <span>Organization</span>
            <select
              value={me.activeOrganizationId ?? ''}
              onChange={(event) => switchOrganization((event.target as HTMLSelectElement).value)}
            >
              {me.organizations.map((organization) => (
                <option key={organization.id} value={organization.id}>
                  {organization.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <span class="who">{me.user.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {sections.map((section) => (
            <li key={section.path}>
              <Link href={section.path} aria-current={section === current ? 'page' : undefined}>
                {section.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        {error && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )}
        {active ? (
          <>
            <p class="plan">
              Plan: <strong>{active.plan}</strong> · your role: {active.role}
            </p>
            {match ? (
              // A new path is a new page: its state (a form half filled, a list read) does not carry over.
              <Fragment key={path}>
                {match.route.render({ ...match, organizationId: active.id, onSignedIn() {} })}
              </Fragment>
            ) : (
              <NotFoundPage path={path} />
            )}
          </>
        ) : (
          <p>
            You are not a member of any organization yet. Ask an owner for an invitation, or create one with{' '}
            <code>POST /v1/orgs</code>.
          </p>
        )}
      </main>
    </div>
  );
}
