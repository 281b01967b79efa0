import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, session } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { SsoSignInForm } from './sso-sign-in.tsx';

interface SignInProps {
  onSignedIn: () => void;
  /** The address to start with (an invitation's). */
  email?: string;
  /** What the page is for, above the form (an invitation's accept page says who is invited). */
  intro?: ComponentChildren;
}

export function SignInPage({ onSignedIn, email: initialEmail = '', intro }: SignInProps) {
  const [mode, setMode] = useState<'sign-in' | 'sign-up' | 'sso'>('sign-in');
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const signing = useMutation(
    async () =>
      mode === 'sign-in'
        ? await api.POST('/v1/auth/sign-in', { body: { email, password } })
        : await api.POST('/v1/auth/sign-up', { body: { email, password, name } }),
    {
      onSuccess: (data) => {
        session.set(data.sessionToken);
        onSignedIn();
      },
    },
  );
  const { pending: busy, error } = signing;

  if (mode === 'sso') {
    return (
      <main class="auth">
        <h1>Sign in with SSO</h1>
        <SsoSignInForm onCancel={() => setMode('sign-in')} />
      </main>
    );
  }
  return (
    <main class="auth">
      <h1>{mode === 'sign-in' ? 'Sign in to orgplane' : 'Create your orgplane account'}</h1>
      {intro}
      <form onSubmit={submitted(signing.mutate)} noValidate>
        {mode === 'sign-up' && (
          <Field label="Name" name="name" value={name} onInput={setName} error={error} autoComplete="name" />
        )}
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
          autoComplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
        />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          {mode === 'sign-in' ? 'Sign in' : 'Create account'}
        </button>
      </form>
      {mode === 'sign-in' && (
        <p>
          Your organization uses single sign-on?{' '}
          <button
            type="button"
            class="link"
            onClick={() => {
              setMode('sso');
              signing.reset();
            }}
          >
            Sign in with SSO
          </button>
        </p>
      )}
      <p>
        {mode === 'sign-in' ? 'No account yet? ' : 'Already have an account? '}
        <button
          type="button"
          class="link"
          onClick={() => {
            setMode(mode === 'sign-in' ? 'sign-up' : 'sign-in');
            signing.reset();
          }}
        >
          {mode === 'sign-in' ? 'Create one' : 'Sign in'}
        </button>
      </p>
    </main>
  );
}
