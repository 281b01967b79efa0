// The SSO setup page (owners and admins): the connection (OIDC or SAML), the DNS record that proves the
// domain with its verification explained, a test sign-in, and requiring SSO once a sign-in has worked.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError } from '../../api.ts';
import { AdminPage } from '../../admin-page.tsx';
import { useCaller } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useMutation, useQuery } from '../../data.ts';
import { SsoConnectionForm } from './sso-connection-form.tsx';
import { draftOf, identityOf, type SsoConnection, type SsoDraft } from './sso-draft.ts';
import { SignInHealth, TestSignIn } from './sso-test.tsx';

export function SsoSetupPage({ organizationId }: { organizationId: string }) {
  const [caller] = useCaller(organizationId);
  // undefined while loading, null when the organization has no connection yet.
  const read = useQuery(() => api.GET('/v1/sso/connection'), [organizationId], {
    absent: 'sso_connection_not_found',
    select: (data): SsoConnection | null => data.connection,
  });
  const connection = read.data;
  const loadError = read.error;
  const setConnection = read.setData;
  const load = async () => (await read.refetch()).data ?? null;
  const [draft, setDraft] = useState<SsoDraft>(draftOf(null));
  // The form starts from the connection as first read for this organization; later reads (the test
  // sign-in follows the connection) leave what is being typed alone.
  const [draftOfOrganization, setDraftOfOrganization] = useState<string | null>(null);
  useEffect(() => {
    if (connection === undefined || draftOfOrganization === organizationId) return;
    setDraft(draftOf(connection));
    setDraftOfOrganization(organizationId);
  }, [connection]);
  function saved(next: SsoConnection) {
    setConnection(next);
    setDraft(draftOf(next));
  }

  return (
    <section aria-labelledby="sso-heading" class="sso-setup">
      <AdminPage
        organizationId={organizationId}
        heading={<h1 id="sso-heading">Single sign-on (SSO)</h1>}
        what="single sign-on"
        loadError={loadError}
        loading={connection === undefined}
      >
        <p>
          People with an address in your domain sign in through your identity provider (OIDC or SAML). Set up the
          connection, prove the domain is yours with a DNS record, test a sign-in, then you may require SSO.
        </p>
        {connection && (
          <dl class="summary">
            <dt>Protocol</dt>
            <dd>{connection.protocol === 'oidc' ? 'OpenID Connect' : 'SAML 2.0'}</dd>
            <dt>Domain</dt>
            <dd>
              {connection.domain} ({connection.domainVerified ? 'verified' : 'not verified yet'})
            </dd>
            <dt>Sign-in tested</dt>
            <dd>{connection.ssoReady ? 'yes' : 'not yet'}</dd>
            <dt>SSO required</dt>
            <dd>{connection.ssoRequired ? 'yes' : 'no'}</dd>
          </dl>
        )}
        <section class="card" aria-labelledby="sso-connection-heading">
          <h2 id="sso-connection-heading">{connection ? 'Connection' : '1. Set up the connection'}</h2>
          {!connection && (
            <p class="note">
              No SSO connection yet. Register orgplane as an application at your identity provider, then fill this in.
            </p>
          )}
          <SsoConnectionForm
            organizationId={organizationId}
            connection={connection ?? null}
            draft={draft}
            onDraft={setDraft}
            onSaved={saved}
          />
          {connection && <ProviderSettings connection={connection} />}
        </section>
        {connection && (
          <>
            <DomainVerification connection={connection} onVerified={setConnection} />
            <section class="card" aria-labelledby="sso-test-heading">
              <h2 id="sso-test-heading">Test sign-in</h2>
              <SignInHealth connection={connection} />
              <TestSignIn connection={connection} callerEmail={caller?.email ?? ''} reload={load} />
            </section>
            <RequireSso connection={connection} draft={draft} onChanged={setConnection} />
          </>
        )}
      </AdminPage>
    </section>
  );
}

/** What to give the identity provider: orgplane's side of the connection. */
function ProviderSettings({ connection }: { connection: SsoConnection }) {
  return (
    <fieldset class="provider-settings" aria-labelledby="sso-provider-settings-heading">
      <h3 id="sso-provider-settings-heading">Give these to your identity provider</h3>
      {connection.redirectUri && (
        <CopyField label="Redirect URI" id="sso-redirect-uri" value={connection.redirectUri} />
      )}
      {connection.spEntityId && <CopyField label="SP entity ID" id="sso-sp-entity-id" value={connection.spEntityId} />}
      {connection.acsUrl && <CopyField label="ACS URL" id="sso-acs-url" value={connection.acsUrl} />}
      {connection.spMetadataUrl && (
        <CopyField label="SP metadata URL" id="sso-sp-metadata-url" value={connection.spMetadataUrl} />
      )}
      {connection.certificateExpiresAt && (
        <p>
          The identity provider's signing certificate expires on{' '}
          <strong>{new Date(connection.certificateExpiresAt).toLocaleDateString()}</strong>: give its new certificate
          here before then.
        </p>
      )}
    </fieldset>
  );
}

type VerifyFailure = ApiError & {
  recordName?: string;
  expectedValue?: string;
  foundValues?: string[];
  retryable?: boolean;
};

function DomainVerification({
  connection,
  onVerified,
}: {
  connection: SsoConnection;
  onVerified: (connection: SsoConnection) => void;
}) {
  const { recordName, recordValue } = connection.verification;
  const verifying = useMutation(() => api.POST('/v1/sso/verify-domain'), {
    progress: `Looking up the TXT record at ${recordName}…`,
    success: (data) => `${data.domain} is verified. Next: test a sign-in.`,
    onSuccess: (data) => onVerified(data.connection),
  });
  const busy = verifying.pending;
  // The API's 422 and 502 answers here carry what was looked up and found (declared in its OpenAPI).
  const failure = verifying.error as VerifyFailure | undefined;
  const verify = () => verifying.mutate();

  return (
    <section class="card" aria-labelledby="sso-dns-heading">
      <h2 id="sso-dns-heading">Domain verification</h2>
      {connection.domainVerified ? (
        <p>
          {connection.domain} is verified
          {connection.domainVerifiedAt ? ` (since ${new Date(connection.domainVerifiedAt).toLocaleString()})` : ''}.
          Keep the record published; verifying again is harmless.
        </p>
      ) : (
        <p>
          Publish this TXT record at your DNS provider, then verify. The value proves {connection.domain} is your
          organization's.
        </p>
      )}
      <CopyField label="TXT record name" id="sso-record-name" value={recordName} />
      <CopyField label="TXT record value" id="sso-record-value" value={recordValue} />
      <button type="button" onClick={verify} disabled={busy}>
        {busy ? 'Looking up the record…' : 'Verify domain'}
      </button>
      <p role="status" class="progress">
        {verifying.status}
      </p>
      {failure && <VerificationFailure failure={failure} />}
    </section>
  );
}

function VerificationFailure({ failure }: { failure: VerifyFailure }) {
  if (failure.error === 'domain_verification_failed') {
    const found = failure.foundValues ?? [];
    return (
      <div class="diagnostic" role="alert">
        <h3>{found.length === 0 ? 'The TXT record was not found' : 'The TXT record has another value'}</h3>
        <dl>
          <dt>Looked up</dt>
          <dd>{failure.recordName}</dd>
          <dt>Expected</dt>
          <dd>{failure.expectedValue}</dd>
          <dt>Found</dt>
          <dd>{found.length === 0 ? 'no TXT record' : found.join(', ')}</dd>
          <dt>What to do</dt>
          <dd>
            Publish a TXT record at exactly that name with exactly the expected value (no quotes or spaces around it),
            then verify again. DNS changes can take from minutes to hours to appear.
          </dd>
        </dl>
      </div>
    );
  }
  if (failure.error === 'dns_lookup_failed') {
    return (
      <div class="diagnostic" role="alert">
        <h3>The DNS lookup failed</h3>
        <dl>
          <dt>What failed</dt>
          <dd>{errorMessage(failure)}</dd>
          <dt>What to do</dt>
          <dd>
            {failure.retryable
              ? "This is usually temporary: try again in a minute. If it lasts, the domain's DNS servers may be down."
              : 'Retrying will not help: the DNS server refused this kind of lookup. Ask whoever runs this orgplane server to check its DNS_SERVERS setting.'}
          </dd>
        </dl>
      </div>
    );
  }
  return (
    <p role="alert" class="form-error">
      {errorMessage(failure)}
    </p>
  );
}

function RequireSso({
  connection,
  draft,
  onChanged,
}: {
  connection: SsoConnection;
  draft: SsoDraft;
  onChanged: (connection: SsoConnection) => void;
}) {
  const [asking, setAsking] = useState(false);
  // A PUT names the identity provider each time. OIDC and a SAML metadata URL come from the connection;
  // SAML metadata or certificates are never returned, so they come from the form above.
  const identity =
    connection.protocol === 'oidc'
      ? { protocol: 'oidc' as const, issuer: connection.issuer, clientId: connection.clientId ?? '' }
      : connection.idpMetadataUrl
        ? { protocol: 'saml' as const, idpMetadataUrl: connection.idpMetadataUrl }
        : identityOf(draft);
  const requiring = useMutation(
    (ssoRequired: boolean) =>
      api.PUT('/v1/sso/connection', { body: { domain: connection.domain, ...identity, ssoRequired } }),
    {
      progress: 'Saving…',
      success: (_, ssoRequired) =>
        ssoRequired
          ? `SSO is now required for ${connection.domain}.`
          : 'SSO is no longer required; members may sign in with a password again.',
      onSuccess: (data) => onChanged(data.connection),
    },
  );
  const { pending: busy, error } = requiring;
  const change = (ssoRequired: boolean) => {
    setAsking(false);
    void requiring.mutate(ssoRequired);
  };

  const samlNeedsIdp = connection.protocol === 'saml' && !connection.idpMetadataUrl;
  return (
    <section class="card" aria-labelledby="sso-require-heading">
      <h2 id="sso-require-heading">Require SSO</h2>
      {connection.ssoRequired ? (
        <>
          <p>
            Members with an address in {connection.domain} sign in only with SSO. The owner may still use a password
            (break-glass access).
          </p>
          <button type="button" class="secondary" disabled={busy} onClick={() => change(false)}>
            Stop requiring SSO
          </button>
        </>
      ) : (
        <>
          <p id="sso-require-why">
            {connection.ssoReady
              ? `Once required, members with an address in ${connection.domain} must sign in with SSO, and their password sessions end at once.`
              : 'SSO can be required only after a test sign-in has succeeded on this connection as it is configured now, so that a connection that does not work cannot lock anyone out.'}
          </p>
          <button
            type="button"
            class="danger"
            disabled={busy || !connection.ssoReady}
            aria-describedby="sso-require-why"
            onClick={() => setAsking(true)}
          >
            Require SSO
          </button>
        </>
      )}
      {samlNeedsIdp && (
        <p class="note">
          For this SAML connection, fill in the identity provider's certificate or metadata in the form above first:
          orgplane does not return them, and saving needs them.
        </p>
      )}
      <p role="status" class="progress">
        {requiring.status}
      </p>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
          {(error.details ?? []).map((detail) => ` ${detail.message}`).join('')}
        </p>
      )}
      {asking && (
        <ConfirmDialog
          title={`Require SSO for ${connection.domain}?`}
          message={`Members with an address in ${connection.domain} must sign in with SSO from now on, and their password sessions end at once. The owner keeps password sign-in for break-glass access.`}
          confirmLabel="Require SSO"
          onConfirm={() => change(true)}
          onCancel={() => setAsking(false)}
        />
      )}
    </section>
  );
}
