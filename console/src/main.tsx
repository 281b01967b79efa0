import { render } from 'preact';
import { useState } from 'preact/hooks';
import { session } from './api.ts';
import { DesktopSignInPage, desktopSignInPath } from './pages/auth/desktop-sign-in.tsx';
import { SignInPage } from './pages/auth/sign-in.tsx';
import { SsoCallbackPage, ssoCallbackPath } from './pages/auth/sso-sign-in.tsx';
import { SsoTestReturnPage, ssoTestReturnPath } from './pages/sso/sso-test.tsx';
import { Shell } from './shell.tsx';
// Registers the re-authentication prompt on the api client, for every page.
import './reauth.tsx';
import './styles.css';

function App() {
  const [signedIn, setSignedIn] = useState(session.token !== null);
  // Back from the identity provider: the code is exchanged even in a tab that had a session (a new sign-in).
  const [ssoReturn, setSsoReturn] = useState(location.pathname === ssoCallbackPath);
  // A test sign-in's window (opened by the SSO page) shows its outcome whoever is signed in there.
  if (location.pathname === ssoTestReturnPath) return <SsoTestReturnPage />;
  if (ssoReturn)
    return (
      <SsoCallbackPage
        onSignedIn={() => {
          setSsoReturn(false);
          setSignedIn(true);
        }}
      />
    );
  // The desktop app's sign-in: signed in first (as anywhere), then the confirmation page of its own.
  if (signedIn && location.pathname === desktopSignInPath) return <DesktopSignInPage />;
  return signedIn ? (
    <Shell onSignedOut={() => setSignedIn(false)} />
  ) : (
    <SignInPage onSignedIn={() => setSignedIn(true)} />
  );
}

render(<App />, document.getElementById('app')!);
