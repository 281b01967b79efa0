// Testing the SSO connection: a real sign-in at the identity provider, in a second window, which
// returns to /sso/test-done instead of signing anyone in (the PKCE verifier is thrown away, so its
// one-time code can never be exchanged). The connection records the outcome (lastSignInAt, or lastError
// with a category), which this page follows and explains.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import type { SsoConnection } from './sso-draft.ts';
import { pkcePair } from '../auth/sso-sign-in.tsx';

export const ssoTestReturnPath = '/sso/test-done';

// What a person does about each category of `lastError` (the API may add categories: those get none).
const advice: Record<string, string> = {
  discovery_failed:
    "orgplane could not read the issuer's configuration: check the issuer URL, and that the identity provider is reachable from this server.",
  provider_unavailable:
    'The identity provider could not be reached to finish the sign-in: try again, and check the network between orgplane and the provider.',
  token_rejected:
    'The provider refused the code, or its ID token failed a check: check the client ID and secret, and that the redirect URI registered at the provider is the one shown above.',
  idp_error:
    'The identity provider answered with an error: read its message, and check the application at the provider (is the person assigned to it?).',
  email_not_verified:
    'The provider did not say the e-mail address is verified: verify it there, or have the provider send email_verified. A provider that never sends it (Microsoft Entra ID) needs "Trust e-mail addresses" set to the verified domain.',
  domain_not_verified:
    "The connection's domain was not verified when the person came back (it had changed): verify the domain, then test again.",
  userinfo_subject_mismatch:
    "The provider's UserInfo answer named another person than its ID token: check the provider (a proxy or a misconfiguration answering for someone else).",
  email_outside_domain:
    "The address the provider gave is not in the connection's domain: sign in as someone with an address in it.",
  not_a_member: 'The person is not a member of this organization: invite them, or turn on just-in-time provisioning.',
  account_not_linkable:
    "An account with this address exists that nothing ties to this organization (made by password sign-up), so SSO did not take it over: if it is the person's, have them accept an invitation from it; if it is not, ask the instance's operator.",
  member_suspended: "The person's membership is suspended: reactivate it (or have the directory do so).",
  member_removed: 'The person was removed from the organization: invite them again to let them in.',
  subject_conflict:
    'The address is already linked to another identity at the provider: check that the provider gives each person one stable identifier.',
  assertion_rejected:
    'The SAML response failed a check (signature, audience, recipient or times): check the signing certificate, and that the provider uses the SP entity ID and ACS URL shown above.',
  assertion_replayed: 'The same SAML assertion arrived twice: start a new sign-in.',
  email_missing:
    'The provider sent no e-mail address. OIDC: grant the email scope (or, trusting the verified domain, send upn or preferred_username). SAML: send it as the NameID (emailAddress format) or as an email attribute.',
  reauthentication_required:
    'The identity provider did not ask the person to sign in again although orgplane asked it to (ForceAuthn).',
  browser_mismatch:
    'The sign-in came back to a browser that did not start it, or without the cookie orgplane set when it started: finish it in the browser that started it, and check that nothing between the browser and orgplane drops cookies (for SAML, orgplane must be served over https).',
};

const when = (iso: string) => new Date(iso).toLocaleString();

/** The connection's last sign-in and last refusal, with what to do about the refusal. */
export function SignInHealth({ connection }: { connection: SsoConnection }) {
  const failure = connection.lastError;
  const failedLast =
    failure && (!connection.lastSignInAt || Date.parse(failure.occurredAt) > Date.parse(connection.lastSignInAt));
  return (
    <>
      <p>
        {connection.lastSignInAt ? (
          <>
            Last successful SSO sign-in: <strong>{when(connection.lastSignInAt)}</strong>.
          </>
        ) : (
          'No SSO sign-in has succeeded on this connection as it is configured now.'
        )}
      </p>
      {failure && (
        <fieldset class={failedLast ? 'diagnostic' : 'diagnostic earlier'} aria-label="Last refused sign-in">
          <h3>{failedLast ? 'The last sign-in was refused' : 'An earlier sign-in was refused'}</h3>
          <dl>
            <dt>When</dt>
            <dd>{when(failure.occurredAt)}</dd>
            <dt>What failed</dt>
            <dd>
              {failure.category}: {failure.message}
            </dd>
            {advice[failure.category] && (
              <>
                <dt>What to do</dt>
                <dd>{advice[failure.category]}</dd>
              </>
            )}
          </dl>
        </fieldset>
      )}
    </>
  );
}

interface Props {
  connection: SsoConnection;
  callerEmail: string;
  reload: () => Promise<SsoConnection | null>;
}

export function TestSignIn({ connection, callerEmail, reload }: Props) {
  const inDomain = callerEmail.toLowerCase().endsWith(`@${connection.domain}`);
  const [email, setEmail] = useState(inDomain ? callerEmail : '');
  const [phase, setPhase] = useState<'idle' | 'starting' | 'waiting'>('idle');
  const [outcome, setOutcome] = useState<'passed' | 'refused' | 'closed' | null>(null);
  // What stops the test before the API is asked (no WebCrypto here, a blocked window).
  const [refusal, setRefusal] = useState<ApiError>();
  const stop = useRef(false);
  // reauthenticate: the provider asks the person to sign in (prompt=login, ForceAuthn) even when it
  // already has a session of someone else in this browser, so the test is of the address typed here.
  const starting = useMutation(
    (codeChallenge: string, _popup: Window | null) =>
      api.POST('/v1/auth/sso/start', {
        body: {
          email,
          redirectUri: `${location.origin}${ssoTestReturnPath}`,
          codeChallenge,
          codeChallengeMethod: 'S256',
          reauthenticate: true,
        },
      }),
    { onSuccess: (data, _challenge, popup) => follow(data.authorizationUrl, popup) },
  );
  const error = refusal ?? starting.error;
  useEffect(
    () => () => {
      stop.current = true;
    },
    [],
  );

  async function test() {
    if (!globalThis.crypto?.subtle) {
      return setRefusal({
        error: 'insecure_context',
        message: 'Testing SSO needs the console over HTTPS (or on localhost).',
      });
    }
    // Opened within the click, so no popup blocker stops it; sent on once the API answers.
    const popup = window.open('', '_blank');
    if (popup) popup.opener = null;
    setRefusal(undefined);
    setOutcome(null);
    setPhase('starting');
    const { challenge } = await pkcePair();
    if (await starting.mutate(challenge, popup)) return;
    popup?.close();
    setPhase('idle');
    await reload();
  }

  async function follow(authorizationUrl: string, popup: Window | null) {
    if (!popup) {
      setPhase('idle');
      await reload();
      return setRefusal({
        error: 'popup_blocked',
        message: 'The browser blocked the test window: allow pop-ups for this console and try again.',
      });
    }
    popup.location.href = authorizationUrl;
    setPhase('waiting');
    const before = { signIn: connection.lastSignInAt, failure: connection.lastError?.occurredAt };
    const deadline = Date.now() + 10 * 60_000;
    let result: typeof outcome = null;
    while (!stop.current && Date.now() < deadline && !result) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const latest = await reload();
      if (latest && latest.lastSignInAt !== before.signIn) result = 'passed';
      else if (latest && latest.lastError?.occurredAt !== before.failure) result = 'refused';
      else if (popup.closed) result = 'closed';
    }
    setPhase('idle');
    setOutcome(result);
  }

  if (!connection.domainVerified) {
    return (
      <p class="note">
        Verify the domain first: sign-in looks the connection up by the domain of the person's e-mail address.
      </p>
    );
  }
  return (
    <form
      class="inline-form"
      onSubmit={submitted(test)}
      noValidate
      aria-label="Test sign-in"
      aria-busy={phase !== 'idle'}
    >
      <Field
        label="Sign in as (e-mail)"
        name="email"
        type="email"
        value={email}
        onInput={setEmail}
        error={error}
        autoComplete="email"
        hint={`Someone with an address in ${connection.domain} who can sign in at the identity provider.`}
      />
      <button type="submit" disabled={phase !== 'idle'}>
        {phase === 'idle' ? 'Test sign-in' : 'Testing…'}
      </button>
      <p role="status" class="progress">
        {phase === 'starting'
          ? 'Opening the identity provider…'
          : phase === 'waiting'
            ? 'Sign in at the identity provider in the window that opened; this page updates when it is done.'
            : outcome === 'passed'
              ? 'The test sign-in passed: the identity provider signed the person in and orgplane accepted them.'
              : outcome === 'refused'
                ? 'The test sign-in was refused: see why below.'
                : outcome === 'closed'
                  ? 'The test window was closed before the sign-in finished.'
                  : ''}
      </p>
      <FormError error={error} />
      {error?.details?.some((detail) => detail.path.join('.') !== 'email') && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
    </form>
  );
}

/** Where a test sign-in returns: says it passed and keeps nothing (its code is useless without the verifier). */
export function SsoTestReturnPage() {
  const [arrived] = useState(() => new URLSearchParams(location.search).has('code'));
  useEffect(() => history.replaceState(null, '', ssoTestReturnPath), []);
  return (
    <main class="auth">
      <h1>{arrived ? 'Test sign-in passed' : 'No sign-in to show'}</h1>
      <p role="status">
        {arrived
          ? 'The identity provider signed you in and orgplane accepted the sign-in. Nobody was signed in to the console by this test. You can close this window: the SSO page shows the result.'
          : 'This page shows the end of a test sign-in started from the SSO page.'}
      </p>
      <button type="button" onClick={() => window.close()}>
        Close this window
      </button>
    </main>
  );
}
