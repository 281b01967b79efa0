// /mcp-connections/new: the server is probed before anything is stored, which takes a moment; a
// failure shows the probe's diagnostic (what failed, who must act) and keeps what was typed.
import { useState } from 'preact/hooks';
import { api, type ApiError } from '../../api.ts';
import { FormError } from '../../forms.tsx';
import { Link, navigate } from '../../router.tsx';
import { AccessEditor, accessBody, orgWideAccess, type Access } from './mcp-access.tsx';
import { bodyOf, ConnectionFields, emptyDraft, type Draft } from './mcp-form.tsx';
import { diagnosticOf, DiagnosticView } from './mcp-parts.tsx';

export function McpCreatePage({ organizationId }: { organizationId: string }) {
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [access, setAccess] = useState<Access>(orgWideAccess);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  async function create(event: Event) {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    const answer = await api.POST('/v1/mcp-connections', {
      body: { ...bodyOf(draft, false), access: accessBody(access) },
    });
    setBusy(false);
    if (answer.error) return setError(answer.error as ApiError);
    navigate(`/mcp-connections/${answer.data.id}`);
  }

  const diagnostic = diagnosticOf(error);
  return (
    <section aria-labelledby="mcp-new-heading">
      <p>
        <Link href="/mcp-connections">← All connections</Link>
      </p>
      <h1 id="mcp-new-heading">Add an MCP connection</h1>
      <form class="mcp-form" onSubmit={create} noValidate aria-label="New connection" aria-busy={busy}>
        <ConnectionFields draft={draft} onChange={setDraft} error={error} editing={false} managedBy={[]} />
        <AccessEditor organizationId={organizationId} access={access} onChange={setAccess} error={error} />
        {diagnostic ? (
          <DiagnosticView diagnostic={diagnostic} title="The server did not pass the check; nothing was saved" />
        ) : (
          <FormError error={error} />
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking the server…' : 'Check and add'}
        </button>
        <p role="status" class="progress">
          {busy ? 'Checking the server: connecting, authorizing and listing its tools…' : ''}
        </p>
      </form>
    </section>
  );
}
