import { render } from 'preact';
import { useState } from 'preact/hooks';
import { session } from './api.ts';
import { SignInPage } from './pages/sign-in.tsx';
import { Shell } from './shell.tsx';
// Registers the re-authentication prompt on the api client, for every page.
import './reauth.tsx';
import './styles.css';

function App() {
  const [signedIn, setSignedIn] = useState(session.token !== null);
  return signedIn ? <Shell onSignedOut={() => setSignedIn(false)} /> : <SignInPage onSignedIn={() => setSignedIn(true)} />;
}

render(<App />, document.getElementById('app')!);
