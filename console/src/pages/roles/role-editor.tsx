// A custom role's form: its name, description and keys, a fieldset of labelled checkboxes per area.
// Keys the signed-in person does not hold are disabled with a note: the API would refuse them
// (403 permission_not_held), since nobody gives what they do not hold.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../../api.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import type { PermissionKey, Role } from '../../roles.tsx';
import { areaLabel, byArea, type Permission, SensitiveMark } from './catalog.tsx';

export interface RoleDraft {
  name: string;
  description: string;
  permissions: PermissionKey[];
}

interface EditorProps {
  /** The role changed, or undefined for a new one. */
  role?: Role | undefined;
  catalog: Permission[];
  held: ReadonlySet<string>;
  error: ApiError | undefined;
  busy: boolean;
  onSave: (draft: RoleDraft) => unknown;
  onCancel: () => void;
}

export function RoleEditor({ role, catalog, held, error, busy, onSave, onCancel }: EditorProps) {
  const [name, setName] = useState(role?.name ?? '');
  const [description, setDescription] = useState(role?.description ?? '');
  const [keys, setKeys] = useState<Set<PermissionKey>>(new Set(role?.permissions ?? []));
  const title = role ? `Edit ${role.name}` : 'New role';
  function toggle(key: PermissionKey, on: boolean) {
    const next = new Set(keys);
    if (on) next.add(key);
    else next.delete(key);
    setKeys(next);
  }
  const lacking = catalog.some((permission) => !held.has(permission.key));
  // The form opens above the list, maybe off screen from the button that opened it: focus goes to its name.
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), []);

  return (
    <form
      ref={form}
      class="card role-editor"
      aria-label={title}
      noValidate
      onSubmit={submitted(() => onSave({ name, description, permissions: [...keys] }))}
    >
      <h2>{title}</h2>
      <Field label="Role name" name="name" value={name} onInput={setName} error={error} autoComplete="off" />
      <Field
        label="Description"
        name="description"
        value={description}
        onInput={setDescription}
        error={error}
        required={false}
        autoComplete="off"
      />
      {lacking && (
        <p class="note" id="not-held-note">
          Keys you do not hold yourself are disabled: nobody gives what they do not hold.
        </p>
      )}
      {byArea(catalog).map(([area, permissions]) => (
        <fieldset key={area}>
          <legend>{areaLabel(area)}</legend>
          {permissions.map((permission) => {
            const id = `key-${permission.key}`;
            const notHeld = !held.has(permission.key);
            return (
              <div class="choice key-choice" key={permission.key}>
                <input
                  type="checkbox"
                  id={id}
                  checked={keys.has(permission.key)}
                  disabled={notHeld}
                  aria-describedby={`${id}-description${notHeld ? ' not-held-note' : ''}`}
                  onChange={(event) => toggle(permission.key, (event.target as HTMLInputElement).checked)}
                />
                <label for={id}>
                  <code>{permission.key}</code> {permission.sensitive && <SensitiveMark />}
                  <span id={`${id}-description`} class="muted key-description">
                    {permission.description}
                    {notHeld && ' (you do not hold this key)'}
                  </span>
                </label>
              </div>
            );
          })}
        </fieldset>
      ))}
      <FormError error={error} />
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          {role ? 'Save role' : 'Create role'}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
