import { render } from 'preact';
import { useState } from 'preact/hooks';
import { api, session } from './api.ts';
import { useQuery } from './data.ts';
import { SignInPage } from './pages/auth/sign-in.tsx';
import { FirstRunPage } from './pages/setup/first-run.tsx';
import { usePath } from './router.tsx';
import { findRoute } from './routes.tsx';
import { Shell } from './shell.tsx';
// Registers the re-authentication prompt on the api client, for every page.
import './reauth.tsx';
import './styles.css';

function App() {
  const path = usePath();
  const [signedIn, setSignedIn] = useState(session.token !== null);
  // A page that replaces the address as it starts (the SSO callback drops its one-time code) stays until done.
  const [staying, setStaying] = useState(() => {
    const match = findRoute(location.pathname);
    return match?.route.stays ? match : null;
  });
  const onSignedIn = () => {
    setStaying(null);
    setSignedIn(true);
  };
  // Asked once, before anyone signs in: a new instance offers its setup instead of a sign-in page.
  const bootstrap = useQuery(() => api.GET('/v1/bootstrap'), [], { select: (data) => data.needed });
  const [setUpAlready, setSetUpAlready] = useState(false);
  const match = staying ?? findRoute(path);
  if (match && match.route.frame === 'public')
    return (
      <>{match.route.render({ ...match, organizationId: '', onSignedIn, onOrganizationsChanged: async () => {} })}</>
    );
  if (!signedIn) {
    if (bootstrap.loading)
      return (
        <main class="auth">
          <p aria-live="polite">Loading…</p>
        </main>
      );
    // An error reading it is no reason to hide the sign-in page: the instance is most likely set up.
    if (bootstrap.data === true && !setUpAlready)
      return <FirstRunPage onSignedIn={onSignedIn} onSetUpAlready={() => setSetUpAlready(true)} />;
    return <SignInPage onSignedIn={onSignedIn} />;
  }
  if (match && match.route.frame === 'alone')
    return (
      <>{match.route.render({ ...match, organizationId: '', onSignedIn, onOrganizationsChanged: async () => {} })}</>
    );
  return <Shell match={match} path={path} onSignedOut={() => setSignedIn(false)} />;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
