import type { ApiError } from './api.ts';
import { fieldErrors } from './api.ts';

interface FieldProps {
  label: string;
  name: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'datetime-local';
  value: string;
  onInput: (value: string) => void;
  error?: ApiError | undefined;
  autoComplete?: string;
  required?: boolean;
}

/** A labelled input with the API's messages for its field under it, tied to it by aria-describedby. */
export function Field({ label, name, type = 'text', value, onInput, error, autoComplete, required = true }: FieldProps) {
  const messages = fieldErrors(error, name);
  const id = `field-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        // Preact types <input> attributes as a union by `type`; a union-typed `type` matches none of its members.
        type={type as 'text'}
        value={value}
        required={required}
        autoComplete={autoComplete}
        aria-invalid={messages.length > 0}
        aria-describedby={messages.length > 0 ? `${id}-error` : undefined}
        onInput={(event) => onInput((event.target as HTMLInputElement).value)}
      />
      {messages.length > 0 && <p id={`${id}-error`} class="field-error">{messages.join(' ')}</p>}
    </div>
  );
}

export function FormError({ error }: { error: ApiError | undefined }) {
  if (!error || (error.details?.length ?? 0) > 0) return null;
  return <p role="alert" class="form-error">{error.message ?? error.error}</p>;
}
