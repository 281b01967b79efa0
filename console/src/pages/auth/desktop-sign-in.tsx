// /desktop/sign-in: where the orgplane desktop app sends the person's browser to sign in (RFC 8252).
// The app's link carries its redirect URI (a loopback port or the orgplane: scheme), its PKCE challenge
// and its state. The person signs in here as always (password or SSO), then confirms; the console asks
// the API for a one-time code for the app and sends the browser to the app with it. The app redeems the
// code with its verifier for a session of its own: this tab's session never leaves the browser. The link
// is anyone's to make: the browser goes only where the API answers (authorize, or cancel), never to the
// link's redirect URI as it stands.
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { useMutation, useQuery, useStatus } from '../../data.ts';

export const desktopSignInPath = '/desktop/sign-in';

interface AppRequest {
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
}

/** The app's request, from this page's address; a string says what is wrong with the link. */
function appRequest(): AppRequest | string {
  const query = new URLSearchParams(location.search);
  const redirectUri = query.get('redirect_uri');
  const codeChallenge = query.get('code_challenge');
  if (!redirectUri || !codeChallenge)
    return 'This sign-in link is incomplete. Start signing in again from the desktop app.';
  if ((query.get('code_challenge_method') ?? 'S256') !== 'S256')
    return 'This sign-in link asks for a method orgplane does not offer. Update the desktop app.';
  return { redirectUri, codeChallenge, state: query.get('state') ?? undefined };
}

export function DesktopSignInPage() {
  const request = appRequest();
  const read = useQuery(() => api.GET('/v1/me'), []);
  const me = read.data;
  const [leaving, setLeaving] = useState<'continue' | 'cancel' | null>(null);
  // Both answers send the browser on to where the API says (the app's redirect); one error shown at a time.
  const status = useStatus();
  const leave = { status, onSuccess: (data: { redirectTo: string }) => location.assign(data.redirectTo) };
  // A session whose sign-in is old is asked to confirm it first (the re-authentication prompt), then this goes on.
  const authorizing = useMutation(
    (app: AppRequest) =>
      api.POST('/v1/auth/desktop/authorize', {
        body: {
          redirectUri: app.redirectUri,
          codeChallenge: app.codeChallenge,
          codeChallengeMethod: 'S256',
          ...(app.state !== undefined ? { state: app.state } : {}),
        },
      }),
    leave,
  );
  // The app's redirect with access_denied, from the API, which refuses a redirect URI the app may not use.
  const cancelling = useMutation(
    (app: AppRequest) =>
      api.POST('/v1/auth/desktop/cancel', {
        body: { redirectUri: app.redirectUri, ...(app.state !== undefined ? { state: app.state } : {}) },
      }),
    leave,
  );
  const error = read.error ?? authorizing.error ?? cancelling.error;

  if (typeof request === 'string') {
    return (
      <main class="auth">
        <h1>Sign in to the desktop app</h1>
        <p role="alert" class="form-error">
          {request}
        </p>
      </main>
    );
  }

  async function proceed(app: AppRequest) {
    setLeaving('continue');
    if (!(await authorizing.mutate(app))) setLeaving(null);
  }
  async function cancel(app: AppRequest) {
    setLeaving('cancel');
    if (!(await cancelling.mutate(app))) setLeaving(null);
  }

  const organization = me?.organizations.find((candidate) => candidate.id === me.activeOrganizationId);
  const waitingAt = URL.canParse(request.redirectUri) ? new URL(request.redirectUri) : null;
  return (
    <main class="auth">
      <h1>Sign in to the desktop app</h1>
      {me && (
        <p>
          You are signed in as <strong>{me.user.email}</strong>
          {organization ? (
            <>
              {' '}
              in <strong>{organization.name}</strong>
            </>
          ) : null}
          . The orgplane desktop app on this computer gets a session of its own for you.
        </p>
      )}
      <p class="muted">
        Continue only if you started signing in from the desktop app just now.
        {waitingAt && (
          <>
            {' '}
            It is waiting at <code>{waitingAt.protocol === 'orgplane:' ? 'orgplane:' : waitingAt.host}</code>.
          </>
        )}
      </p>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
      <p role="status">
        {leaving === 'continue'
          ? 'Returning to the desktop app… You can close this tab once it says you are signed in.'
          : leaving === 'cancel'
            ? 'Telling the desktop app you cancelled…'
            : ''}
      </p>
      <div class="actions">
        <button type="button" disabled={!me || leaving !== null} onClick={() => void proceed(request)}>
          Continue to the desktop app
        </button>
        <button type="button" class="secondary" disabled={leaving !== null} onClick={() => void cancel(request)}>
          Cancel
        </button>
      </div>
    </main>
  );
}
