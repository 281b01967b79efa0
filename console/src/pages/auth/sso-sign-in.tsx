// SSO sign-in from the console: the e-mail picks the organization whose identity provider signs the
// person in (POST /v1/auth/sso/start), the browser goes there and comes back to /sso/callback with a
// one-time code, which is exchanged, with the PKCE verifier only this tab holds, for a session.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, session, type ApiError } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';

// The verifier waits in sessionStorage while the browser is at the identity provider: the same tab
// comes back to the callback, and no other tab or site can read it. (A step-up's window, opened by the
// console, starts with a copy of the console tab's sessionStorage: the verifier and the session.)
export const verifierKey = 'orgplane.sso.verifier';
// Where the sign-in started (the desktop app's sign-in page, say): the callback returns there.
const returnKey = 'orgplane.sso.return';
/** The message a step-up's window sends the console tab that opened it, once the session is refreshed. */
export const reauthenticatedMessage = 'orgplane.sso.reauthenticated';
export const ssoCallbackPath = '/sso/callback';

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

export function SsoSignInForm({ onCancel }: { onCancel: () => void }) {
  const [email, setEmail] = useState('');
  // crypto.subtle exists only in secure contexts (https, or localhost): PKCE cannot be done without it.
  const [insecure, setInsecure] = useState<ApiError>();
  const opening = 'Opening your identity provider…';
  const starting = useMutation(
    (pkce: { verifier: string; challenge: string }) =>
      api.POST('/v1/auth/sso/start', {
        body: {
          email,
          redirectUri: `${location.origin}${ssoCallbackPath}`,
          codeChallenge: pkce.challenge,
          codeChallengeMethod: 'S256',
        },
      }),
    {
      progress: opening,
      // Still opening while the browser leaves for the identity provider.
      success: opening,
      onSuccess: (data, pkce) => {
        sessionStorage.setItem(verifierKey, pkce.verifier);
        sessionStorage.setItem(returnKey, location.pathname + location.search);
        location.assign(data.authorizationUrl);
      },
    },
  );
  const error = insecure ?? starting.error;
  const busy = starting.pending || starting.status === opening;

  async function submit() {
    setInsecure(undefined);
    if (!globalThis.crypto?.subtle) {
      return setInsecure({
        error: 'insecure_context',
        message: 'SSO sign-in needs the console over HTTPS (or on localhost).',
      });
    }
    await starting.mutate(await pkcePair());
  }

  return (
    <form onSubmit={submitted(submit)} noValidate aria-label="Sign in with SSO">
      <p>Enter your work e-mail: your organization's identity provider signs you in.</p>
      <Field
        label="Work email"
        name="email"
        type="email"
        value={email}
        onInput={setEmail}
        error={error}
        autoComplete="email"
      />
      <FormError error={error} />
      <p role="status">{starting.status}</p>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Continue with SSO
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Use a password instead
        </button>
      </div>
    </form>
  );
}

/** Where the identity provider's sign-in returns (through orgplane's callback, which adds `?code=`). */
export function SsoCallbackPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [confirmed, setConfirmed] = useState(false);

  async function exchange() {
    const code = new URLSearchParams(location.search).get('code');
    const codeVerifier = sessionStorage.getItem(verifierKey);
    sessionStorage.removeItem(verifierKey);
    // The code is single use: it leaves the address bar (and the history) whatever happens next.
    history.replaceState(null, '', '/');
    if (!code || !codeVerifier)
      return setError('This sign-in link was not started in this tab, or was used already. Start again.');
    const answer = await api.POST('/v1/auth/sso/token', { body: { code, codeVerifier } });
    if (answer.error) return setError(errorMessage(answer.error));
    if (answer.data.authenticatedAt) {
      // A step-up, in the window the re-authentication prompt opened: the console tab's session is
      // fresh now; that tab re-sends its refused request once told.
      window.opener?.postMessage({ kind: reauthenticatedMessage }, location.origin);
      setConfirmed(true);
      window.close();
      return;
    }
    if (!answer.data.sessionToken)
      return setError('The identity provider answered without a new session. Start again.');
    session.set(answer.data.sessionToken);
    // Only a path of this console (never another origin).
    const back = sessionStorage.getItem(returnKey);
    sessionStorage.removeItem(returnKey);
    if (back?.startsWith('/') && !back.startsWith('//')) history.replaceState(null, '', back);
    onSignedIn();
  }
  useEffect(() => void exchange(), []);

  if (confirmed) {
    return (
      <main class="auth">
        <h1>You are confirmed</h1>
        <p role="status">
          Your sign-in is fresh again. Go back to the console window: the change you asked for continues there.
        </p>
      </main>
    );
  }
  return (
    <main class="auth">
      <h1>{error ? 'SSO sign-in did not finish' : 'Signing you in'}</h1>
      {error ? (
        <>
          <p role="alert" class="form-error">
            {error}
          </p>
          <a href="/">Back to sign in</a>
        </>
      ) : (
        <p role="status">Finishing the sign-in with your identity provider…</p>
      )}
    </main>
  );
}
