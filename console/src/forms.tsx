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
  /** A <textarea> for text of several lines. */
  multiline?: boolean;
  /** Help under the label, tied to the control by aria-describedby. */
  hint?: string;
}

/** A labelled input with the API's messages for its field under it, tied to it by aria-describedby. */
export function Field({
  label,
  name,
  type = 'text',
  value,
  onInput,
  error,
  autoComplete,
  required = true,
  multiline = false,
  hint,
}: FieldProps) {
  const messages = fieldErrors(error, name);
  const id = `field-${name}`;
  const describedBy =
    [hint ? `${id}-hint` : '', messages.length > 0 ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    value,
    required,
    autoComplete,
    'aria-invalid': messages.length > 0,
    'aria-describedby': describedBy,
    onInput: (event: Event) => onInput((event.target as HTMLInputElement | HTMLTextAreaElement).value),
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      {multiline ? (
        <textarea {...common} rows={4} />
      ) : (
        // Preact types <input> attributes as a union by `type`; a union-typed `type` matches none of its members.
        <input {...common} type={type as 'text'} />
      )}
      {messages.length > 0 && (
        <p id={`${id}-error`} class="field-error">
          {messages.join(' ')}
        </p>
      )}
    </div>
  );
}

/** A form's submit handler: the page stays (no browser submission) and `run` does the work. */
export function submitted(run: () => unknown) {
  return (event: Event) => {
    event.preventDefault();
    void run();
  };
}

export function FormError({ error }: { error: ApiError | undefined }) {
  if (!error || (error.details?.length ?? 0) > 0) return null;
  return (
    <p role="alert" class="form-error">
      {error.message ?? error.error}
    </p>
  );
}
