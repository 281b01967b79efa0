// Testing a connection (POST .../test, which probes the server and records the credential's health)
// and connecting through OAuth: the authorization runs in a second window opened by the click, and this
// page follows the connection until the credential arrives.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage, type paths } from '../../api.ts';
import { useMutation } from '../../data.ts';
import { ApiKeyForm, DisconnectButton } from './mcp-credentials.tsx';
import { diagnosticOf, DiagnosticView, healthText, loadConnection, type Connection } from './mcp-parts.tsx';

type TestResult =
  paths['/v1/mcp-connections/{connectionId}/test']['post']['responses'][200]['content']['application/json'];

interface Props {
  connection: Connection;
  isAdmin: boolean;
  onChanged: () => Promise<void>;
}

export function ConnectionStatus({ connection, isAdmin, onChanged }: Props) {
  const [result, setResult] = useState<TestResult>();
  const testRun = useMutation(
    () => api.POST('/v1/mcp-connections/{connectionId}/test', { params: { path: { connectionId: connection.id } } }),
    {
      progress: 'Testing: reaching the server, authorizing, and listing its tools…',
      // The result shows at once; the connection's health is read again behind it.
      onSuccess: (data) => {
        setResult(data);
        void onChanged();
      },
    },
  );
  const { pending: testing, error: testError } = testRun;
  const test = () => {
    setResult(undefined);
    void testRun.mutate();
  };

  return (
    <section aria-labelledby="mcp-status-heading">
      <h2 id="mcp-status-heading">Check and connect</h2>
      <div class="actions-row">
        {isAdmin && (
          <button type="button" onClick={test} disabled={testing}>
            {testing ? 'Testing…' : 'Test the connection'}
          </button>
        )}
        {connection.authType === 'oauth' && (
          <OAuthConnect connection={connection} isAdmin={isAdmin} onChanged={onChanged} />
        )}
        <DisconnectButton connection={connection} isAdmin={isAdmin} onChanged={onChanged} />
      </div>
      {connection.authType === 'apikey' && (
        <ApiKeyForm connection={connection} isAdmin={isAdmin} onChanged={onChanged} />
      )}
      <p role="status" class="progress">
        {testRun.status}
      </p>
      {testError && (
        <p role="alert" class="form-error">
          {errorMessage(testError)}
        </p>
      )}
      {result?.ok && (
        <p role="alert" class="success">
          The test passed every check (up to {result.highestPassed}). The server offers {result.tools.length}{' '}
          {result.tools.length === 1 ? 'tool' : 'tools'}
          {result.tools.length > 0 ? `: ${result.tools.join(', ')}` : ''}. Credential health: {healthText(connection)}.
        </p>
      )}
      {result && !result.ok && result.diagnostic && (
        <DiagnosticView diagnostic={result.diagnostic} title="The test failed" />
      )}
    </section>
  );
}

function OAuthConnect({ connection, isAdmin, onChanged }: Props) {
  const perMember = connection.credentialMode === 'per_member';
  const [phase, setPhase] = useState<'idle' | 'starting' | 'waiting' | 'done'>('idle');
  const stop = useRef(false);
  const authorize = useMutation(
    (_popup: Window | null) =>
      api.POST('/v1/mcp-connections/{connectionId}/oauth/authorize', {
        params: { path: { connectionId: connection.id } },
      }),
    { onSuccess: (data, popup) => follow(data, popup) },
  );
  const error = authorize.error;
  useEffect(
    () => () => {
      stop.current = true;
    },
    [],
  );
  // The shared identity is the organization's: only owners and admins connect it.
  if (!perMember && !isAdmin) return null;

  async function connect() {
    // Opened within the click, so no popup blocker stops it; it is sent on once the API answers.
    const popup = window.open('', '_blank');
    // The authorization server's pages get no handle on this one.
    if (popup) popup.opener = null;
    setPhase('starting');
    if (await authorize.mutate(popup)) return;
    popup?.close();
    setPhase('idle');
  }

  async function follow(authorization: { authorizationUrl: string; expiresAt: string }, popup: Window | null) {
    if (!popup) return location.assign(authorization.authorizationUrl);
    popup.location.href = authorization.authorizationUrl;
    setPhase('waiting');
    const wasConnected = connection.connectedForMe;
    const checkedBefore = connection.credentialHealthCheckedAt;
    const deadline = Math.min(Date.parse(authorization.expiresAt), Date.now() + 10 * 60_000);
    while (!stop.current && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const latest = await loadConnection(connection.id);
      // A new credential: one where there was none, or a fresh check of the one replaced.
      const arrived =
        latest.data?.connectedForMe && (!wasConnected || latest.data.credentialHealthCheckedAt !== checkedBefore);
      if (arrived || popup.closed) break;
    }
    setPhase('done');
    await onChanged();
  }

  const label = perMember ? 'Connect your account' : "Connect the organization's account";
  const diagnostic = diagnosticOf(error);
  return (
    <div class="oauth-connect">
      <button type="button" onClick={connect} disabled={phase === 'starting' || phase === 'waiting'}>
        {phase === 'starting'
          ? 'Starting the authorization…'
          : phase === 'waiting'
            ? 'Waiting for the authorization…'
            : connection.connectedForMe
              ? `${label} again`
              : label}
      </button>
      <p role="status" class="progress">
        {phase === 'waiting'
          ? 'Finish the authorization in the window that opened; this page updates when it is done.'
          : phase === 'done'
            ? `Authorization finished. Credential health: ${healthText(connection)}.`
            : ''}
      </p>
      {diagnostic ? (
        <DiagnosticView diagnostic={diagnostic} title="The authorization could not start" />
      ) : (
        error && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )
      )}
    </div>
  );
}
