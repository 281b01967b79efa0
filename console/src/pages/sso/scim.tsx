// SCIM provisioning (owners and admins): the base URL and token a directory (Okta, Entra ID) needs, the
// token rotated after a confirmation and shown once, and the connector's health as the API reports it.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type components } from '../../api.ts';
import { AdminPage } from '../../admin-page.tsx';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useMutation, useQuery } from '../../data.ts';

type Connector = components['schemas']['ScimConnectorView'];

const when = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : 'never');

export function ScimPage({ organizationId }: { organizationId: string }) {
  // undefined while loading, null when no token was ever created.
  const read = useQuery(() => api.GET('/v1/scim/connection'), [organizationId], {
    absent: 'scim_connection_not_found',
    select: (data): Connector | null => data,
  });
  const connector = read.data;
  const loadError = read.error;
  const [asking, setAsking] = useState(false);
  // The token itself, shown once right after rotation; the API never answers it again.
  const [token, setToken] = useState<string | null>(null);
  useEffect(() => setToken(null), [organizationId]);
  const rotation = useMutation(() => api.POST('/v1/scim/token'), {
    progress: 'Creating the token…',
    onSuccess: ({ scimToken, ...view }) => {
      setToken(scimToken);
      read.setData(view);
    },
  });
  const { pending: busy, error } = rotation;
  const rotate = () => {
    setAsking(false);
    void rotation.mutate();
  };

  const health = connector?.health;
  return (
    <section aria-labelledby="scim-heading">
      <AdminPage
        organizationId={organizationId}
        heading={<h1 id="scim-heading">SCIM provisioning</h1>}
        what="SCIM provisioning"
        loadError={loadError}
        loading={connector === undefined}
      >
        <p>
          Your directory (Okta, Entra ID…) adds, updates and removes members through SCIM 2.0. Give it the base URL and
          a token.
        </p>
        {connector ? (
          <>
            <CopyField label="SCIM base URL" id="scim-base-url" value={connector.baseUrl} />
            <section class="card" aria-labelledby="scim-health-heading">
              <h2 id="scim-health-heading">Health</h2>
              <dl class="summary">
                <dt>Last successful sync</dt>
                <dd>{when(health?.lastSuccessfulSyncAt)}</dd>
                <dt>Failed requests since the last success</dt>
                <dd>{health?.unresolvedFailureCount ?? 0}</dd>
                {health?.lastFailureAt && (
                  <>
                    <dt>Last failure</dt>
                    <dd>
                      {when(health.lastFailureAt)}
                      {health.lastFailureAction ? ` (${health.lastFailureAction})` : ''}
                      {health.lastFailureMessage ? `: ${health.lastFailureMessage}` : ''}
                    </dd>
                  </>
                )}
                {health?.nextRetryAt && (
                  <>
                    <dt>Directory retries at</dt>
                    <dd>{when(health.nextRetryAt)}</dd>
                  </>
                )}
                <dt>SSO sign-in tested</dt>
                <dd>
                  {connector.ssoReady
                    ? 'yes'
                    : 'not yet: people the directory adds cannot sign in with SSO until a test sign-in succeeds'}
                </dd>
              </dl>
            </section>
          </>
        ) : (
          <p class="note">
            No SCIM token yet. SCIM needs an SSO connection with a verified domain; then create a token and give it to
            your directory with the base URL.
          </p>
        )}
        {token && (
          <section class="secret" aria-label="New SCIM token">
            <p>
              <strong>Copy the token now: you will not see it again.</strong> Paste it into your directory's SCIM
              settings as the bearer token.
            </p>
            <CopyField label="SCIM token" id="new-scim-token" value={token} />
            <button type="button" class="secondary" onClick={() => setToken(null)}>
              I have stored it
            </button>
          </section>
        )}
        <button
          type="button"
          class={connector ? 'danger' : undefined}
          disabled={busy}
          onClick={() => (connector ? setAsking(true) : rotate())}
        >
          {connector ? 'Rotate SCIM token' : 'Create SCIM token'}
        </button>
        <p role="status" class="progress">
          {rotation.status}
        </p>
        {error && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )}
        {asking && (
          <ConfirmDialog
            title="Rotate the SCIM token?"
            message="The current token stops working at once: your directory cannot provision anyone until you give it the new token."
            confirmLabel="Rotate token"
            onConfirm={rotate}
            onCancel={() => setAsking(false)}
          />
        )}
      </AdminPage>
    </section>
  );
}
