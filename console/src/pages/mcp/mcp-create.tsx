// /mcp-connections/new: the server is probed before anything is stored, which takes a moment; a
// failure shows the probe's diagnostic (what failed, who must act) and keeps what was typed.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { FormError, submitted } from '../../forms.tsx';
import { Link, navigate } from '../../router.tsx';
import { AccessEditor, accessBody, orgWideAccess, type Access } from './mcp-access.tsx';
import { bodyOf, ConnectionFields, emptyDraft, type Draft } from './mcp-form.tsx';
import { diagnosticOf, DiagnosticView } from './mcp-parts.tsx';

export function McpCreatePage({ organizationId }: { organizationId: string }) {
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [access, setAccess] = useState<Access>(orgWideAccess);
  const create = useMutation(
    () => api.POST('/v1/mcp-connections', { body: { ...bodyOf(draft, false), access: accessBody(access) } }),
    {
      progress: 'Checking the server: connecting, authorizing and listing its tools…',
      onSuccess: (data) => navigate(`/mcp-connections/${encodeURIComponent(data.id)}`),
    },
  );
  const { pending: busy, error } = create;

  const diagnostic = diagnosticOf(error);
  return (
    <section aria-labelledby="mcp-new-heading">
      <p>
        <Link href="/mcp-connections">← All connections</Link>
      </p>
      <h1 id="mcp-new-heading">Add an MCP connection</h1>
      <form
        class="mcp-form"
        onSubmit={submitted(create.mutate)}
        noValidate
        aria-label="New connection"
        aria-busy={busy}
      >
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
          {create.status}
        </p>
      </form>
    </section>
  );
}
