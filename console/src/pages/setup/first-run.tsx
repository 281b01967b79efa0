// The first page of a new instance (GET /v1/bootstrap says `needed`): the first administrator and the
// first organization, by POST /v1/bootstrap, whose rules the API applies and whose messages show beside
// the fields. The answer's session signs the person in, on the organization just made.
import { useState } from 'preact/hooks';
import { api, session } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { navigate } from '../../router.tsx';

interface FirstRunProps {
  onSignedIn: () => void;
  /** Someone else set the instance up meanwhile: on to the sign-in page. */
  onSetUpAlready: () => void;
}

export function FirstRunPage({ onSignedIn, onSetUpAlready }: FirstRunProps) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organizationName, setOrganizationName] = useState('');
  const setup = useMutation(() => api.POST('/v1/bootstrap', { body: { name, email, password, organizationName } }), {
    progress: 'Setting up…',
    onSuccess: (data) => {
      session.set(data.sessionToken);
      navigate('/', { replace: true });
      onSignedIn();
    },
  });
  const { error } = setup;
  return (
    <main class="auth">
      <h1>Set up orgplane</h1>
      <p>
        This instance has no administrator yet. Create the first account, which administers the instance, and the first
        organization, which it owns.
      </p>
      <form onSubmit={submitted(setup.mutate)} noValidate>
        <fieldset>
          <legend>Administrator</legend>
          <Field label="Name" name="name" value={name} onInput={setName} error={error} autoComplete="name" />
          <Field
            label="Email"
            name="email"
            type="email"
            value={email}
            onInput={setEmail}
            error={error}
            autoComplete="email"
          />
          <Field
            label="Password"
            name="password"
            type="password"
            value={password}
            onInput={setPassword}
            error={error}
            autoComplete="new-password"
            hint="At least 8 characters."
          />
        </fieldset>
        <fieldset>
          <legend>Organization</legend>
          <Field
            label="Organization name"
            name="organizationName"
            value={organizationName}
            onInput={setOrganizationName}
            error={error}
            autoComplete="organization"
          />
        </fieldset>
        <FormError error={error} />
        <p role="status">{setup.status}</p>
        <button type="submit" disabled={setup.pending}>
          Set up orgplane
        </button>
      </form>
      {error?.error === 'already_bootstrapped' && (
        <p>
          <button type="button" class="link" onClick={onSetUpAlready}>
            Go to the sign-in page
          </button>
        </p>
      )}
    </main>
  );
}
