import { useState } from 'preact/hooks';

/** A secret or link shown in a read-only field with a button that copies it; says so when it did. */
export function CopyField({ label, value, id }: { label: string; value: string; id: string }) {
  const [status, setStatus] = useState('');
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setStatus('Copied.');
    } catch {
      // No clipboard permission: select the text so Ctrl+C works.
      (document.getElementById(id) as HTMLInputElement | null)?.select();
      setStatus('Press Ctrl+C to copy the selected text.');
    }
  }
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input
          id={id}
          type="text"
          readOnly
          value={value}
          onFocus={(event) => (event.target as HTMLInputElement).select()}
        />
        <button type="button" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
          Copy
        </button>
      </div>
      <p role="status" class="copy-status">
        {status}
      </p>
    </div>
  );
}
