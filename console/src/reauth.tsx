// Step-up re-authentication for every page at once: privileged writes answer 403 `reauth` when the
// session's last authentication is too old. This middleware of the one api client catches that answer,
// asks for the password in a dialog, re-authenticates through the API and re-sends the very same
// request, so the page that made the call receives the retried answer and its form is never re-entered.
// A session that signed in through SSO confirms through its identity provider instead: the prompt opens
// the provider in a second window (POST /v1/auth/sso/start with reauthenticate), which comes back to the
// console's SSO callback, refreshes this session there and tells this tab, which then re-sends.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError } from './api.ts';
import { useMutation } from './data.ts';
import { Field, FormError, submitted } from './forms.tsx';
import { pkcePair, reauthenticatedMessage, ssoCallbackPath, verifierKey } from './pages/auth/sso-sign-in.tsx';

// The request as it was sent (its body is consumed by the first fetch), keyed by openapi-fetch's request id.
const sent = new Map<string, Request>();
// One prompt for however many requests were refused at the same time.
let pending: Promise<boolean> | null = null;

api.use({
  onRequest({ request, id }) {
    sent.set(id, request.clone());
  },
  async onResponse({ response, id }) {
    const original = sent.get(id);
    sent.delete(id);
    if (response.status !== 403 || !original) return undefined;
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { error?: unknown } | null;
    if (body?.error !== 'reauth') return undefined;
    pending ??= askForPassword().finally(() => {
      pending = null;
    });
    if (!(await pending)) return undefined;
    return fetch(original);
  },
  onError({ id }) {
    sent.delete(id);
  },
});

function askForPassword(): Promise<boolean> {
  const host = document.createElement('div');
  document.body.append(host);
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      render(null, host);
      host.remove();
      resolve(ok);
    };
    render(<ReauthDialog onDone={done} />, host);
  });
}

function ReauthDialog({ onDone }: { onDone: (ok: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // null until GET /v1/me answered; then how this session last authenticated.
  const [me, setMe] = useState<{ email: string; authMethod: string } | null>(null);
  useEffect(() => {
    dialog.current?.showModal();
    void api
      .GET('/v1/me')
      .then((answer) =>
        setMe(
          answer.data
            ? { email: answer.data.user.email, authMethod: answer.data.session.authMethod }
            : { email: '', authMethod: 'password' },
        ),
      );
  }, []);

  return (
    <dialog ref={dialog} aria-labelledby="reauth-title" aria-describedby="reauth-reason" onCancel={() => onDone(false)}>
      <h2 id="reauth-title">Confirm it is you</h2>
      {me?.authMethod === 'sso' ? (
        <SsoConfirmation email={me.email} onDone={onDone} />
      ) : (
        <PasswordConfirmation onDone={onDone} />
      )}
    </dialog>
  );
}

function PasswordConfirmation({ onDone }: { onDone: (ok: boolean) => void }) {
  const [password, setPassword] = useState('');
  const confirming = useMutation(() => api.POST('/v1/auth/reauthenticate', { body: { password } }), {
    onSuccess: () => onDone(true),
  });
  const { pending: busy, error } = confirming;

  return (
    <>
      <p id="reauth-reason">
        {/* The API's message is written for integrators (it names routes); a person needs less. */}
        This change needs a recent sign-in. Enter your password and the change you asked for continues.
      </p>
      <form onSubmit={submitted(confirming.mutate)} noValidate>
        <Field
          label="Your password"
          name="password"
          type="password"
          value={password}
          onInput={setPassword}
          error={error}
          autoComplete="current-password"
        />
        <FormError error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            {busy ? 'Checking…' : 'Confirm and continue'}
          </button>
        </div>
      </form>
    </>
  );
}

function SsoConfirmation({ email, onDone }: { email: string; onDone: (ok: boolean) => void }) {
  const [error, setError] = useState<ApiError>();
  const [waiting, setWaiting] = useState(false);
  // Made before the click: the window must open within the click (or the browser blocks it), and it
  // must start with the verifier already in this tab's sessionStorage, of which it gets a copy.
  const [pkce, setPkce] = useState<{ verifier: string; challenge: string } | null>(null);
  useEffect(() => {
    void pkcePair().then(setPkce);
    const confirmed = (event: MessageEvent) => {
      if (event.origin === location.origin && event.data?.kind === reauthenticatedMessage) onDone(true);
    };
    window.addEventListener('message', confirmed);
    return () => window.removeEventListener('message', confirmed);
  }, []);

  async function start() {
    if (!pkce) return;
    setError(undefined);
    sessionStorage.setItem(verifierKey, pkce.verifier);
    const provider = window.open('about:blank', 'orgplane-sso-reauth', 'popup,width=520,height=680');
    sessionStorage.removeItem(verifierKey);
    const answer = await api.POST('/v1/auth/sso/start', {
      body: {
        email,
        redirectUri: `${location.origin}${ssoCallbackPath}`,
        codeChallenge: pkce.challenge,
        codeChallengeMethod: 'S256',
        reauthenticate: true,
      },
    });
    if (answer.error || !provider) {
      provider?.close();
      return setError(
        answer.error ?? {
          error: 'popup_blocked',
          message: "The browser blocked the identity provider's window. Allow pop-ups for this site and try again.",
        },
      );
    }
    provider.location.assign(answer.data.authorizationUrl);
    setWaiting(true);
  }

  return (
    <>
      <p id="reauth-reason">
        This change needs a recent sign-in. Your identity provider confirms it is you in a new window, and the change
        you asked for continues here.
      </p>
      <FormError error={error} />
      <p role="status">{waiting ? 'Waiting for your identity provider…' : ''}</p>
      <div class="actions">
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          Cancel
        </button>
        <button type="button" disabled={!pkce} onClick={() => void start()}>
          {waiting ? 'Open the identity provider again' : 'Continue with SSO'}
        </button>
      </div>
    </>
  );
}
