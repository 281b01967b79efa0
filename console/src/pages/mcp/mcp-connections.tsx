// /mcp-connections: the list; /mcp-connections/new, /mcp-connections/install-plugin and
// /mcp-connections/<id> are the pages under it.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError } from '../../api.ts';
import { navigate, usePath } from '../../router.ts';
import { McpConnectionPage } from './mcp-connection.tsx';
import { McpCreatePage } from './mcp-create.tsx';
import { authTypeLabels, healthText, type Connection } from './mcp-parts.tsx';
import { PluginInstallPage } from './plugin-install.tsx';

export function McpConnectionsPage({ organizationId }: { organizationId: string }) {
  const path = usePath();
  const rest = path.replace(/^\/mcp-connections\/?/, '');
  if (rest === 'new') return <McpCreatePage organizationId={organizationId} />;
  if (rest === 'install-plugin') return <PluginInstallPage />;
  if (rest)
    return <McpConnectionPage key={rest} organizationId={organizationId} connectionId={decodeURIComponent(rest)} />;
  return <ConnectionList organizationId={organizationId} />;
}

function link(path: string) {
  return (event: Event) => {
    event.preventDefault();
    navigate(path);
  };
}

function ConnectionList({ organizationId }: { organizationId: string }) {
  const [connections, setConnections] = useState<Connection[] | null>(null);
  const [error, setError] = useState<ApiError>();

  useEffect(() => {
    setConnections(null);
    setError(undefined);
    // Every page of the list: an organization has tens of connections, not thousands.
    (async () => {
      const all: Connection[] = [];
      let cursor: string | undefined;
      do {
        const answer = await api.GET('/v1/mcp-connections', {
          params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
        });
        if (!answer.data) return setError(answer.error as ApiError);
        all.push(...answer.data.connections);
        cursor = answer.data.nextCursor ?? undefined;
      } while (cursor);
      setConnections(all);
    })();
  }, [organizationId]);

  return (
    <section aria-labelledby="mcp-heading">
      <div class="page-head">
        <h1 id="mcp-heading">MCP connections</h1>
        <div class="page-actions">
          <a class="button" href="/mcp-connections/new" onClick={link('/mcp-connections/new')}>
            Add a connection
          </a>
          <a
            class="button secondary"
            href="/mcp-connections/install-plugin"
            onClick={link('/mcp-connections/install-plugin')}
          >
            Install a plugin
          </a>
        </div>
      </div>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
      {connections === null && !error && <p aria-live="polite">Loading connections…</p>}
      {connections?.length === 0 && (
        <p class="empty">
          No MCP connections yet. Add one with the URL of an MCP server; the server is checked before it is saved, and
          you choose who may use it.
        </p>
      )}
      {connections && connections.length > 0 && (
        <table class="mcp-table">
          <caption class="visually-hidden">MCP connections of this organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">URL</th>
              <th scope="col">Authentication</th>
              <th scope="col">Credential health</th>
            </tr>
          </thead>
          <tbody>
            {connections.map((connection) => (
              <tr key={connection.id}>
                <td>
                  <a href={`/mcp-connections/${connection.id}`} onClick={link(`/mcp-connections/${connection.id}`)}>
                    {connection.name}
                  </a>
                </td>
                <td class="url">{connection.url}</td>
                <td>
                  {authTypeLabels[connection.authType]}
                  {connection.authType !== 'none' && connection.credentialMode === 'per_member' ? ', per member' : ''}
                </td>
                <td>{healthText(connection)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
