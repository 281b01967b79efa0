import { Fragment } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, errorMessage, session } from './api.ts';
import { useMutation, useQuery } from './data.ts';
import { NotFoundPage } from './pages/not-found.tsx';
import { NoOrganization } from './pages/organizations/no-organization.tsx';
import { Link } from './router.tsx';
import { roleName, useMyPermissions, useRoles } from './roles.tsx';
import { instanceSections, type Match, sectionOf, sectionsFor } from './routes.tsx';

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
  const activeRole = me?.organizations.find((organization) => organization.id === me.activeOrganizationId)?.role;
  // What the navigation lists follows the keys the person holds there, read again with another
  // organization or another role (a custom role's keys count as a built-in's).
  const keys = useMyPermissions([me?.activeOrganizationId, activeRole]);
  // A custom role is named, not shown by its id.
  const roles = useRoles(me?.activeOrganizationId ?? '');
  // The person's organizations change outside this tab too (one created through the API or another tab,
  // a removal): read them again whenever the person comes back to the tab, as TanStack Query's
  // refetchOnWindowFocus does, so the picker and the page follow what the API says without a reload.
  useEffect(() => {
    const again = () => {
      // The keys too: a role's keys may have changed while its id stayed.
      if (document.visibilityState === 'visible') void Promise.all([read.refetch(), keys.refetch()]);
    };
    addEventListener('focus', again);
    document.addEventListener('visibilitychange', again);
    return () => {
      removeEventListener('focus', again);
      document.removeEventListener('visibilitychange', again);
    };
  }, []);
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
  const onOrganizationsChanged = () => read.refetch();
  const context = { onSignedIn() {}, onOrganizationsChanged };

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
              value={active?.id ?? ''}
              disabled={switching.pending}
              onChange={(event) => switchOrganization((event.target as HTMLSelectElement).value)}
            >
              {!active && (
                <option value="" disabled>
                  Choose…
                </option>
              )}
              {me.organizations.map((organization) => (
                <option key={organization.id} value={organization.id}>
                  {organization.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <Link href="/organizations/new" aria-current={path === '/organizations/new' ? 'page' : undefined}>
          New organization
        </Link>
        <span class="who">{me.user.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {sectionsFor(keys.data).map((section) => (
            <li key={section.path}>
              <Link href={section.path} aria-current={section === current ? 'page' : undefined}>
                {section.label}
              </Link>
            </li>
          ))}
        </ul>
        {me.user.isInstanceAdmin && (
          <>
            <h2 class="nav-heading" id="instance-nav">
              Instance
            </h2>
            <ul aria-labelledby="instance-nav">
              {instanceSections.map((section) => (
                <li key={section.path}>
                  <Link href={section.path} aria-current={section === current ? 'page' : undefined}>
                    {section.label}
                  </Link>
                </li>
              ))}
            </ul>
          </>
        )}
      </nav>
      <main>
        {error && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )}
        {match?.route.withoutOrganization ? (
          <Fragment key={path}>
            {match.route.render({ ...match, organizationId: active?.id ?? '', ...context })}
          </Fragment>
        ) : active ? (
          <>
            <p class="plan">
              Plan: <strong>{active.plan}</strong> · your role: {roleName(roles.data, active.role)}
            </p>
            {match ? (
              // A new path is a new page: its state (a form half filled, a list read) does not carry over.
              <Fragment key={path}>{match.route.render({ ...match, organizationId: active.id, ...context })}</Fragment>
            ) : (
              <NotFoundPage path={path} />
            )}
          </>
        ) : (
          <NoOrganization
            organizations={me.organizations}
            onChoose={switchOrganization}
            onOrganizationsChanged={onOrganizationsChanged}
            busy={switching.pending}
          />
        )}
      </main>
    </div>
  );
}
