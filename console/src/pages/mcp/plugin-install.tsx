// /mcp-connections/install-plugin: installs a marketplace plugin from its manifest (pasted, or read from
// a file). The API creates or reuses the connections the manifest requires; the page then lists them,
// with which ones the plugin manages (their URL and authentication are locked on their own pages).
// Uninstalling is on each connection's page, where the plugin is named.
import { useState } from 'preact/hooks';
import { api, errorMessage, type ApiError, type components } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { Link } from '../../router.tsx';
import { loadConnection } from './mcp-parts.tsx';

type Plugin = components['schemas']['Plugin'];
type Installed = { plugin: Plugin; connections: { id: string; name: string; managed: boolean }[] };

const fieldId = 'field-manifest';

/** The API's messages about the manifest, each with where in it (its `details[].path` past `manifest`). */
function manifestMessages(error: ApiError | undefined): string[] {
  return (error?.details ?? [])
    .filter((detail) => detail.path[0] === 'manifest')
    .map((detail) =>
      detail.path.length > 1 ? `${detail.path.slice(1).join('.')}: ${detail.message}` : detail.message,
    );
}

export function PluginInstallPage() {
  const [text, setText] = useState('');
  // A manifest that is not JSON is refused here, in the API's words, before any request.
  const [notJson, setNotJson] = useState<ApiError>();
  const [installed, setInstalled] = useState<Installed | null>(null);
  const installing = useMutation(
    (manifest: components['schemas']['PluginManifestInput']) => api.POST('/v1/plugins', { body: { manifest } }),
    {
      // Still installing while the names of the connections it requires are read.
      onSuccess: async ({ plugin }) => {
        const connections = await Promise.all(
          plugin.requires.map(async (id) => {
            const loaded = await loadConnection(id);
            return { id, name: loaded.data?.name ?? id, managed: plugin.managesIdentityOf.includes(id) };
          }),
        );
        setInstalled({ plugin, connections });
      },
    },
  );
  const busy = installing.pending;
  const error = notJson ?? installing.error;

  async function readFile(event: Event) {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (file) setText(await file.text());
  }

  async function submit(event: Event) {
    event.preventDefault();
    setNotJson(undefined);
    installing.reset();
    let manifest: unknown;
    try {
      manifest = JSON.parse(text);
    } catch (parseError) {
      return setNotJson({
        error: 'invalid_request',
        message: 'The manifest is not JSON.',
        details: [{ path: ['manifest'], message: `This is not JSON: ${(parseError as Error).message}` }],
      });
    }
    await installing.mutate(manifest as components['schemas']['PluginManifestInput']);
  }

  const messages = manifestMessages(error);
  const back = (
    <p>
      <Link href="/mcp-connections">← All connections</Link>
    </p>
  );
  if (installed) {
    const { plugin, connections } = installed;
    return (
      <section aria-labelledby="plugin-heading">
        {back}
        <h1 id="plugin-heading">Plugin installed</h1>
        <p role="status">
          {plugin.name}
          {plugin.version ? ` ${plugin.version}` : ''} is installed.
        </p>
        {connections.length === 0 ? (
          <p>It requires no MCP connection.</p>
        ) : (
          <>
            <p>It requires these MCP connections. A new one is usable by nobody until you grant access on its page.</p>
            <ul class="plugin-connections">
              {connections.map((connection) => (
                <li key={connection.id}>
                  <Link href={`/mcp-connections/${encodeURIComponent(connection.id)}`}>{connection.name}</Link>
                  {connection.managed && (
                    <span class="muted"> · its URL and authentication are managed by the plugin</span>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    );
  }
  return (
    <section aria-labelledby="plugin-heading">
      {back}
      <h1 id="plugin-heading">Install a plugin</h1>
      <p>Paste the plugin's manifest, or read it from its file. Owners and admins install plugins.</p>
      <form onSubmit={submit} noValidate class="plugin-form">
        <div class="field">
          <label for={fieldId}>Plugin manifest (JSON)</label>
          <textarea
            id={fieldId}
            name="manifest"
            rows={12}
            spellcheck={false}
            value={text}
            required
            aria-invalid={messages.length > 0}
            aria-describedby={messages.length > 0 ? `${fieldId}-error` : undefined}
            onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
          />
          {messages.length > 0 && (
            <p id={`${fieldId}-error`} class="field-error">
              {messages.join(' ')}
            </p>
          )}
        </div>
        <div class="field">
          <label for="field-manifest-file">Or read it from a file</label>
          <input
            id="field-manifest-file"
            type="file"
            accept="application/json,.json"
            onChange={(event) => void readFile(event)}
          />
        </div>
        {error && messages.length === 0 && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={busy || text.trim() === ''}>
            {busy ? 'Installing…' : 'Install plugin'}
          </button>
        </div>
      </form>
    </section>
  );
}
