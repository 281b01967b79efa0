// Step-up re-authentication for every page at once: privileged writes answer 403 `reauth` when the
// session's last authentication is too old. This middleware of the one api client catches that answer,
// asks for the password in a dialog, re-authenticates through the API and re-sends the very same
// request, so the page that made the call receives the retried answer and its form is never re-entered.
// SSO-only accounts (403 password_not_set) are told to sign in again: the SSO step-up needs the SSO
// callback page, which the console does not have yet.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError } from './api.ts';
import { Field, FormError } from './forms.tsx';

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
    const body = (await response.clone().json().catch(() => null)) as ApiError | null;
    if (body?.error !== 'reauth') return undefined;
    pending ??= askForPassword().finally(() => { pending = null; });
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
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  useEffect(() => dialog.current?.showModal(), []);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const answer = await api.POST('/v1/auth/reauthenticate', { body: { password } });
    setBusy(false);
    if (answer.error) return setError(answer.error as ApiError);
    onDone(true);
  }

  return (
    <dialog ref={dialog} aria-labelledby="reauth-title" aria-describedby="reauth-reason" onCancel={() => onDone(false)}>
      <h2 id="reauth-title">Confirm it is you</h2>
      <p id="reauth-reason">
        {/* The API's message is written for integrators (it names routes); a person needs less. */}
        This change needs a recent sign-in. Enter your password and the change you asked for continues.
      </p>
      <form onSubmit={submit} noValidate>
        <Field label="Your password" name="password" type="password" value={password} onInput={setPassword} error={error} autoComplete="current-password" />
        <FormError error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
          <button type="submit" disabled={busy}>{busy ? 'Checking…' : 'Confirm and continue'}</button>
        </div>
      </form>
    </dialog>
  );
}
