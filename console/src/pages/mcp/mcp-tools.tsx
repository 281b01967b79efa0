// The tool catalog of a connection (GET .../tools, with the policy applied) and the tool policy editor
// (PUT .../tool-policy): every tool, only some (allow list), or all but some (deny list), and whether
// calls of tools that may be destructive need an approval. Tools the policy names that the server no
// longer offers are listed as absent, so their decision stays visible.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { useMutation, useQuery } from '../../data.ts';
import { FormError, submitted } from '../../forms.tsx';
import { messagesUnder } from './mcp-form.tsx';
import type { Catalog } from './mcp-parts.tsx';

type Tool = Catalog['tools'][number];
type Mode = Catalog['toolPolicy']['mode'];

const modeLabels: Record<Mode, string> = {
  all: 'Every tool',
  allow_list: 'Only the tools ticked (allow list)',
  deny_list: 'Every tool but those ticked (deny list)',
};

function annotationText(tool: Tool): string {
  const a = tool.annotations ?? {};
  const words = [a.readOnlyHint ? 'read-only' : a.destructiveHint === false ? 'not destructive' : 'may be destructive'];
  if (a.idempotentHint) words.push('idempotent');
  if (a.openWorldHint) words.push('reaches outside systems');
  return words.join(', ');
}

function statusText(tool: Tool): string {
  if (tool.absent) return 'Absent: no longer offered by the server';
  if (!tool.allowed) return 'Not allowed';
  return tool.needsApproval ? 'Allowed, each call needs approval' : 'Allowed';
}

export function ToolsSection({
  connectionId,
  isAdmin,
  version,
}: {
  connectionId: string;
  isAdmin: boolean;
  version: number;
}) {
  const [mode, setMode] = useState<Mode>('all');
  const [named, setNamed] = useState<string[]>([]);
  const [approval, setApproval] = useState(false);
  // The catalog is read again after each of the page's writes (`version`); the policy form follows it.
  const read = useQuery(
    () => api.GET('/v1/mcp-connections/{connectionId}/tools', { params: { path: { connectionId } } }),
    [connectionId, version],
    { keepPrevious: true },
  );
  const catalog = read.data ?? null;
  useEffect(() => {
    if (!catalog) return;
    setMode(catalog.toolPolicy.mode);
    setNamed(catalog.toolPolicy.tools);
    setApproval(catalog.toolPolicy.destructiveNeedsApproval);
  }, [catalog]);
  const loadError = read.error;
  const save = useMutation(
    () =>
      api.PUT('/v1/mcp-connections/{connectionId}/tool-policy', {
        params: { path: { connectionId } },
        body: { mode, tools: mode === 'all' ? [] : named, destructiveNeedsApproval: approval },
      }),
    { success: 'Tool policy saved.', onSuccess: read.refetch },
  );
  const { pending: busy, error } = save;

  const toggle = (name: string, on: boolean) =>
    setNamed(on ? [...named, name] : named.filter((existing) => existing !== name));
  const listing = mode !== 'all';
  return (
    <section aria-labelledby="mcp-tools-heading">
      <h2 id="mcp-tools-heading">Tools</h2>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {!catalog && !loadError && <p aria-live="polite">Loading the tool catalog…</p>}
      {catalog && (
        <form onSubmit={submitted(save.mutate)} noValidate aria-label="Tool policy" aria-busy={busy}>
          <p class="note">
            {catalog.catalogUpdatedAt
              ? `Catalog of ${catalog.serverInfo ? `${catalog.serverInfo.name} ${catalog.serverInfo.version}` : 'the server'}` +
                `${catalog.protocolVersion ? ` (MCP ${catalog.protocolVersion})` : ''}, taken ${new Date(catalog.catalogUpdatedAt).toLocaleString()}.`
              : 'No catalog yet: test the connection to list the tools the server offers.'}
            {catalog.truncated ? ' The server offers more than is stored: only part of its catalog is listed.' : ''}
          </p>
          {catalog.tools.length === 0 && catalog.catalogUpdatedAt && <p class="empty">The server offers no tools.</p>}
          {catalog.tools.length > 0 && (
            <div class="table-scroll">
              <table class="mcp-tools">
                <caption class="visually-hidden">Tools of this connection</caption>
                <thead>
                  <tr>
                    <th scope="col">Tool</th>
                    <th scope="col">Description</th>
                    <th scope="col">Annotations</th>
                    <th scope="col">For you</th>
                    {isAdmin && <th scope="col">In the list</th>}
                  </tr>
                </thead>
                <tbody>
                  {catalog.tools.map((tool) => (
                    <tr key={tool.name} class={tool.absent ? 'absent' : undefined}>
                      <td>
                        <code>{tool.name}</code>
                        {tool.title && <div>{tool.title}</div>}
                      </td>
                      <td>{tool.description ?? ''}</td>
                      <td>{tool.absent ? '' : annotationText(tool)}</td>
                      <td>{statusText(tool)}</td>
                      {isAdmin && (
                        <td>
                          <input
                            type="checkbox"
                            aria-label={`${tool.name} in the list`}
                            disabled={!listing}
                            checked={listing && named.includes(tool.name)}
                            onChange={(event) => toggle(tool.name, (event.target as HTMLInputElement).checked)}
                          />
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {isAdmin && (
            <>
              <fieldset aria-describedby={messagesUnder(error, 'mode').length > 0 ? 'policy-mode-error' : undefined}>
                <legend>Which tools workspaces may call</legend>
                {(Object.keys(modeLabels) as Mode[]).map((key) => (
                  <label class="choice" key={key}>
                    <input type="radio" name="policy-mode" checked={mode === key} onChange={() => setMode(key)} />
                    {modeLabels[key]}
                  </label>
                ))}
                {messagesUnder(error, 'mode').length > 0 && (
                  <p id="policy-mode-error" class="field-error">
                    {messagesUnder(error, 'mode').join(' ')}
                  </p>
                )}
                {messagesUnder(error, 'tools').length > 0 && (
                  <p class="field-error">{messagesUnder(error, 'tools').join(' ')}</p>
                )}
              </fieldset>
              <label class="choice">
                <input
                  type="checkbox"
                  checked={approval}
                  onChange={(event) => setApproval((event.target as HTMLInputElement).checked)}
                />
                Each call of a tool that may be destructive needs an approval
              </label>
              <FormError error={error} />
              <button type="submit" disabled={busy}>
                {busy ? 'Saving…' : 'Save tool policy'}
              </button>
              <p role="status">{save.status}</p>
            </>
          )}
        </form>
      )}
    </section>
  );
}
