import { render } from 'preact';
import { useState } from 'preact/hooks';
import { session } from './api.ts';
import { SignInPage } from './pages/auth/sign-in.tsx';
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
  const match = staying ?? findRoute(path);
  if (match && match.route.frame === 'public')
    return <>{match.route.render({ ...match, organizationId: '', onSignedIn })}</>;
  if (!signedIn) return <SignInPage onSignedIn={onSignedIn} />;
  if (match && match.route.frame === 'alone')
    return <>{match.route.render({ ...match, organizationId: '', onSignedIn })}</>;
  return <Shell match={match} path={path} onSignedOut={() => setSignedIn(false)} />;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
