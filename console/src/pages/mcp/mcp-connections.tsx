// /mcp-connections: the organization's MCP connections (the pages under it are in routes.tsx).
import { api, errorMessage } from '../../api.ts';
import { useList } from '../../data.ts';
import { Link } from '../../router.tsx';
import { authTypeLabels, healthText } from './mcp-parts.tsx';

export function McpConnectionListPage({ organizationId }: { organizationId: string }) {
  const list = useList(
    (cursor) => api.GET('/v1/mcp-connections', { params: { query: { limit: 100, cursor } } }),
    (page) => page.connections,
    [organizationId],
  );
  const connections = list.items ?? null;
  const error = list.error;

  return (
    <section aria-labelledby="mcp-heading">
      <div class="page-head">
        <h1 id="mcp-heading">MCP connections</h1>
        <div class="page-actions">
          <Link class="button" href="/mcp-connections/new">
            Add a connection
          </Link>
          <Link class="button secondary" href="/mcp-connections/install-plugin">
            Install a plugin
          </Link>
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
                  <Link href={`/mcp-connections/${encodeURIComponent(connection.id)}`}>{connection.name}</Link>
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
