// /invitations/accept: where an invitation's link leads (the e-mail's, or one an admin copied). The
// token is in the address's fragment (#token=...&email=...), which the browser never sends to a server,
// so it stays out of access logs and Referer headers; this page reads it and hands it to the API. Signed
// in as the invited address: one click joins and lands in the organization. Not signed in: sign in or
// sign up with the address prefilled, then join. Signed in as someone else: say so, and offer to sign
// out. The address in the link is only a hint for the form: the API alone decides who may accept.
import { useState } from 'preact/hooks';
import { api, errorMessage, session, type ApiError } from '../../api.ts';
import { useMutation, useQuery } from '../../data.ts';
import { navigate } from '../../router.tsx';
import { SignInPage } from '../auth/sign-in.tsx';

export const invitationAcceptPath = '/invitations/accept';

function invitationLink(): { token: string; email: string } | null {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token');
  return token ? { token, email: fragment.get('email') ?? '' } : null;
}

/** What a refused accept means for the person holding the link. */
function refusal(error: ApiError): string {
  if (error.error === 'invitation_not_found')
    return 'This invitation link no longer works: it was used, revoked, replaced by a newer link, or it expired. Ask the person who invited you for a new one.';
  if (error.error === 'already_member') return 'You are a member of this organization already.';
  return errorMessage(error);
}

export function InvitationAcceptPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [link] = useState(invitationLink);
  const [signedIn, setSignedIn] = useState(session.token !== null);
  if (!link) {
    return (
      <main class="auth">
        <h1>Join an organization</h1>
        <p role="alert" class="form-error">
          This invitation link is incomplete. Open the link from the invitation e-mail again, whole, or ask for a new
          one.
        </p>
      </main>
    );
  }
  if (!signedIn) {
    return (
      <SignInPage
        email={link.email}
        intro={
          <p>
            You were invited to an organization on orgplane
            {link.email && (
              <>
                {' '}
                as <strong>{link.email}</strong>
              </>
            )}
            . Sign in, or create your account, with that address to join.
          </p>
        }
        onSignedIn={() => {
          setSignedIn(true);
          onSignedIn();
        }}
      />
    );
  }
  return <Join link={link} onSignedOut={() => setSignedIn(false)} />;
}

function Join({ link, onSignedOut }: { link: { token: string; email: string }; onSignedOut: () => void }) {
  const read = useQuery(async () => {
    const answer = await api.GET('/v1/me');
    // The tab's session ended (expired, signed out elsewhere): sign in again, here.
    if (answer.response.status === 401) {
      session.clear();
      onSignedOut();
    }
    return answer;
  }, []);
  const me = read.data;
  const [wrongAccount, setWrongAccount] = useState(false);
  const joining = useMutation(
    async () => {
      const answer = await api.POST('/v1/invitations/{token}/accept', { params: { path: { token: link.token } } });
      if (answer.error?.error === 'forbidden') setWrongAccount(true);
      return answer;
    },
    {
      progress: 'Joining…',
      onSuccess: async (data) => {
        // Land in the organization joined, whichever one the session had open before.
        await api.PUT('/v1/session/active-organization', { body: { organizationId: data.member.organizationId } });
        navigate('/', { replace: true });
      },
    },
  );
  const signOut = useMutation(() => api.POST('/v1/auth/sign-out'), {
    onSuccess: () => {
      session.clear();
      onSignedOut();
    },
  });

  if (!me) {
    return (
      <main class="auth">
        <h1>Join an organization</h1>
        <p aria-live="polite">{read.error ? errorMessage(read.error) : 'Loading…'}</p>
      </main>
    );
  }
  const another = wrongAccount || (link.email !== '' && me.user.email.toLowerCase() !== link.email.toLowerCase());
  if (another) {
    return (
      <main class="auth">
        <h1>This invitation is for another account</h1>
        <p role="alert">
          You are signed in as <strong>{me.user.email}</strong>, but the invitation was sent to{' '}
          <strong>{link.email || 'another address'}</strong>. Sign out, then sign in or create an account with the
          invited address to join. Or ask for an invitation to {me.user.email}.
        </p>
        <div class="actions">
          <button type="button" disabled={signOut.pending} onClick={() => void signOut.mutate()}>
            Sign out and continue
          </button>
          <a href="/">Back to the console</a>
        </div>
      </main>
    );
  }
  const error = joining.error && joining.error.error !== 'forbidden' ? joining.error : undefined;
  return (
    <main class="auth">
      <h1>Join an organization</h1>
      <p>
        You are signed in as <strong>{me.user.email}</strong>. Accept the invitation to join the organization that sent
        it.
      </p>
      {error && (
        <p role="alert" class="form-error">
          {refusal(error)}
        </p>
      )}
      <p role="status">{joining.status}</p>
      <div class="actions">
        <button type="button" disabled={joining.pending} onClick={() => void joining.mutate()}>
          Accept and join
        </button>
        <a href="/">Back to the console</a>
      </div>
    </main>
  );
}
