// /mcp-connections/<id>: the connection's health, test and OAuth connect; its settings, access and
// tools; deletion. The settings form edits against the `updatedAt` this page read: only this page's
// own writes (and an explicit reload) move it, so a change by someone else is a 409 to resolve.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useMutation, useQuery } from '../../data.ts';
import { Link, navigate } from '../../router.tsx';
import { AccessSection, EditSection } from './mcp-edit.tsx';
import { authTypeLabels, credentialModeLabels, healthText, loadConnection, type Connection } from './mcp-parts.tsx';
import { ConnectionStatus } from './mcp-status.tsx';
import { ToolsSection } from './mcp-tools.tsx';

export function McpConnectionPage({ organizationId, connectionId }: { organizationId: string; connectionId: string }) {
  const [connection, setConnection] = useState<Connection | null>(null);
  // The connection as last fetched for its health (after a test or an OAuth connect): shown, never edited against.
  const [latest, setLatest] = useState<Connection | null>(null);
  const [revision, setRevision] = useState(0);
  const [catalogVersion, setCatalogVersion] = useState(0);
  const [deleting, setDeleting] = useState(false);
  const [uninstalling, setUninstalling] = useState<{ pluginId: string; name: string } | null>(null);

  // Each read (the first, or an explicit reload) replaces what the forms edit against.
  const read = useQuery(() => loadConnection(connectionId), [connectionId, organizationId]);
  const loadError = read.error;
  const reload = read.refetch;
  useEffect(() => {
    if (!read.data) return;
    setConnection(read.data);
    setLatest(read.data);
    setRevision((n) => n + 1);
    setCatalogVersion((n) => n + 1);
  }, [read.data]);

  async function refreshHealth() {
    const answer = await loadConnection(connectionId);
    if (answer.data) setLatest(answer.data);
    setCatalogVersion((n) => n + 1);
  }
  function ownWrite(updated: Connection) {
    setConnection(updated);
    setLatest(updated);
    setCatalogVersion((n) => n + 1);
  }

  const removing = useMutation(
    () => api.DELETE('/v1/mcp-connections/{connectionId}', { params: { path: { connectionId } } }),
    { onSuccess: () => navigate('/mcp-connections') },
  );
  const deleteError = removing.error;
  const remove = () => {
    setDeleting(false);
    void removing.mutate();
  };

  // The connection stays: the plugin no longer requires it nor manages its identity.
  const uninstallation = useMutation(
    (pluginId: string) => api.DELETE('/v1/plugins/{pluginId}', { params: { path: { pluginId } } }),
    { onSuccess: reload },
  );
  const pluginError = uninstallation.error;
  const uninstall = () => {
    if (!uninstalling) return;
    setUninstalling(null);
    void uninstallation.mutate(uninstalling.pluginId);
  };

  const back = (
    <p>
      <Link href="/mcp-connections">← All connections</Link>
    </p>
  );
  if (!connection || !latest) {
    return (
      <section aria-label="MCP connection">
        {back}
        <p aria-live="polite">{loadError ? errorMessage(loadError) : 'Loading the connection…'}</p>
      </section>
    );
  }
  // Members see a connection without its access list; editing it is for owners and admins.
  const isAdmin = connection.access !== null;
  return (
    <section aria-labelledby="mcp-connection-heading" class="mcp-connection">
      {back}
      <h1 id="mcp-connection-heading">{latest.name}</h1>
      <dl class="summary">
        <dt>URL</dt>
        <dd class="url">{latest.url}</dd>
        <dt>Authentication</dt>
        <dd>
          {authTypeLabels[latest.authType]}
          {latest.authType !== 'none' ? ` · ${credentialModeLabels[latest.credentialMode]}` : ''}
        </dd>
        <dt>Credential health</dt>
        <dd data-health={latest.credentialHealth}>{healthText(latest)}</dd>
        {latest.requiredBy.length > 0 && (
          <>
            <dt>Required by</dt>
            <dd>
              <ul class="plugins">
                {latest.requiredBy.map((plugin) => (
                  <li key={plugin.pluginId}>
                    {plugin.name}
                    {isAdmin && (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Uninstall the plugin ${plugin.name}`}
                        onClick={() => setUninstalling(plugin)}
                      >
                        Uninstall
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      {pluginError && (
        <p role="alert" class="form-error">
          {errorMessage(pluginError)}
        </p>
      )}
      {uninstalling && (
        <ConfirmDialog
          title={`Uninstall ${uninstalling.name}?`}
          message="The plugin no longer requires this connection nor manages its URL and authentication. The connection and its credentials stay."
          confirmLabel="Uninstall"
          onConfirm={uninstall}
          onCancel={() => setUninstalling(null)}
        />
      )}
      <ConnectionStatus connection={latest} isAdmin={isAdmin} onChanged={refreshHealth} />
      <ToolsSection connectionId={connectionId} isAdmin={isAdmin} version={catalogVersion} />
      {isAdmin && (
        <>
          <EditSection key={revision} connection={connection} onSaved={ownWrite} onReload={reload} />
          <AccessSection
            key={`access-${revision}`}
            organizationId={organizationId}
            connection={connection}
            onSaved={ownWrite}
          />
          <section aria-labelledby="mcp-delete-heading" class="danger-zone">
            <h2 id="mcp-delete-heading">Delete</h2>
            <p>Deleting removes the connection and every stored credential; workspaces can no longer call its tools.</p>
            {deleteError && (
              <p role="alert" class="form-error">
                {errorMessage(deleteError)}
              </p>
            )}
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete this connection
            </button>
          </section>
        </>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this connection?"
          message={`${connection.name} and its credentials will be deleted. This cannot be undone.`}
          confirmLabel="Delete connection"
          onConfirm={remove}
          onCancel={() => setDeleting(false)}
        />
      )}
    </section>
  );
}
