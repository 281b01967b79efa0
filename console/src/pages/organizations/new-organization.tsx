// Creating an organization (POST /v1/orgs): the person becomes its owner and the API makes it the
// session's active one, so the shell reads /v1/me again and shows it at once.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { navigate } from '../../router.tsx';

interface CreateProps {
  /** Reads the person's organizations again (the shell's picker). */
  onOrganizationsChanged: () => Promise<unknown>;
}

export function CreateOrganizationForm({ onOrganizationsChanged }: CreateProps) {
  const [name, setName] = useState('');
  const creating = useMutation(() => api.POST('/v1/orgs', { body: { name } }), {
    progress: 'Creating the organization…',
    onSuccess: async () => {
      await onOrganizationsChanged();
      navigate('/');
    },
  });
  return (
    <form onSubmit={submitted(creating.mutate)} noValidate aria-label="New organization">
      <Field
        label="Organization name"
        name="name"
        value={name}
        onInput={setName}
        error={creating.error}
        autoComplete="organization"
        hint="You become its owner; you can rename it later."
      />
      <FormError error={creating.error} />
      <p role="status">{creating.status}</p>
      <button type="submit" disabled={creating.pending}>
        Create organization
      </button>
    </form>
  );
}

export function NewOrganizationPage(props: CreateProps) {
  return (
    <section>
      <h1>New organization</h1>
      <CreateOrganizationForm {...props} />
    </section>
  );
}
