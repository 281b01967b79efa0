// The SSO connection's settings (PUT /v1/sso/connection): OIDC or SAML with every field the API takes,
// just-in-time provisioning, and the API's messages beside the field they name. The client secret is
// write-only: blank keeps the stored one. The API never returns a SAML identity provider's metadata or
// certificates, so a SAML connection named by them needs them again to save a change. An OIDC connection
// says how it trusts the e-mail its provider asserts (emailTrust; docs/api/sso-providers.md).
// The draft it edits, and the body it sends, are sso-draft.ts.
import { api } from '../../api.ts';
import { useList, useMutation } from '../../data.ts';
import { Field, submitted } from '../../forms.tsx';
import { RoleOptions, useRoles } from '../../roles.tsx';
import { bodyOf, unplacedMessages, type SsoConnection, type SsoDraft } from './sso-draft.ts';

interface Props {
  organizationId: string;
  connection: SsoConnection | null;
  draft: SsoDraft;
  onDraft: (draft: SsoDraft) => void;
  onSaved: (connection: SsoConnection) => void;
}

export function SsoConnectionForm({ organizationId, connection, draft, onDraft, onSaved }: Props) {
  const roles = useRoles(organizationId);
  // The teams people provisioned just in time may join (a team not listed could not be chosen).
  const teamList = useList(
    (cursor) =>
      api.GET('/v1/orgs/{organizationId}/teams', {
        params: { path: { organizationId }, query: { limit: 100, cursor } },
      }),
    (page) => page.teams,
    [organizationId],
  );
  const teams = teamList.items ?? [];
  const set =
    <K extends keyof SsoDraft>(key: K) =>
    (value: SsoDraft[K]) =>
      onDraft({ ...draft, [key]: value });

  const save = useMutation(() => api.PUT('/v1/sso/connection', { body: bodyOf(draft) }), {
    progress: draft.protocol === 'saml' ? "Saving: reading the identity provider's metadata…" : 'Saving…',
    success: (data) =>
      data.connection.domainVerified ? 'Saved.' : 'Saved. Now publish the DNS record below and verify the domain.',
    onSuccess: (data) => onSaved(data.connection),
  });
  const { pending: busy, error } = save;

  const roleMessages = fieldErrors('jitProvisioning.defaultRole');
  const teamMessages = fieldErrors('jitProvisioning.defaultTeamIds');
  function fieldErrors(path: string) {
    return (error?.details ?? []).filter((detail) => detail.path.join('.') === path).map((detail) => detail.message);
  }
  const unplaced = unplacedMessages(error);
  const secretHint = connection?.clientSecretSet
    ? 'A secret is stored; it is never shown. Leave blank to keep it, or type a new one to replace it.'
    : undefined;
  const samlNeedsIdpAgain = connection?.protocol === 'saml' && draft.idpSource !== 'metadataUrl';

  return (
    <form
      class="sso-form"
      onSubmit={submitted(save.mutate)}
      noValidate
      aria-label="SSO connection settings"
      aria-busy={busy}
    >
      <Field
        label="Domain"
        name="domain"
        value={draft.domain}
        onInput={set('domain')}
        error={error}
        autoComplete="off"
        hint="Your organization's e-mail domain, such as example.com. People with an address there sign in through this connection."
      />
      <fieldset>
        <legend>Protocol</legend>
        <label class="choice">
          <input
            type="radio"
            name="protocol"
            checked={draft.protocol === 'oidc'}
            onChange={() => set('protocol')('oidc')}
          />{' '}
          OpenID Connect (OIDC)
        </label>
        <label class="choice">
          <input
            type="radio"
            name="protocol"
            checked={draft.protocol === 'saml'}
            onChange={() => set('protocol')('saml')}
          />{' '}
          SAML 2.0
        </label>
      </fieldset>
      {draft.protocol === 'oidc' ? (
        <>
          <Field
            label="Issuer URL"
            name="issuer"
            type="url"
            value={draft.issuer}
            onInput={set('issuer')}
            error={error}
            autoComplete="off"
            hint="The identity provider's issuer; orgplane reads its /.well-known/openid-configuration."
          />
          <Field
            label="Client ID"
            name="clientId"
            value={draft.clientId}
            onInput={set('clientId')}
            error={error}
            autoComplete="off"
          />
          <Field
            label="Client secret"
            name="clientSecret"
            type="password"
            value={draft.clientSecret}
            onInput={set('clientSecret')}
            error={error}
            autoComplete="new-password"
            required={false}
            hint={secretHint}
          />
          <fieldset aria-describedby="email-trust-hint">
            <legend>Trust e-mail addresses</legend>
            <label class="choice">
              <input
                type="radio"
                name="emailTrust"
                checked={draft.emailTrust === 'verified_claim'}
                onChange={() => set('emailTrust')('verified_claim')}
              />{' '}
              When the provider says they are verified (email_verified): Okta, Google, Keycloak, Auth0, JumpCloud
            </label>
            <label class="choice">
              <input
                type="radio"
                name="emailTrust"
                checked={draft.emailTrust === 'verified_domain'}
                onChange={() => set('emailTrust')('verified_domain')}
              />{' '}
              When they are in the verified domain: Microsoft Entra ID, which never sends email_verified
            </label>
            <p class="note" id="email-trust-hint">
              Choose the domain only for your organization's own directory, where your administrators assign the
              addresses. A provider that says an address is not verified is refused either way.
            </p>
            {fieldErrors('emailTrust').map((message) => (
              <p class="field-error">{message}</p>
            ))}
          </fieldset>
        </>
      ) : (
        <fieldset>
          <legend>Identity provider</legend>
          <label class="choice">
            <input
              type="radio"
              name="idp-source"
              checked={draft.idpSource === 'metadataUrl'}
              onChange={() => set('idpSource')('metadataUrl')}
            />{' '}
            Metadata URL
          </label>
          <label class="choice">
            <input
              type="radio"
              name="idp-source"
              checked={draft.idpSource === 'metadataXml'}
              onChange={() => set('idpSource')('metadataXml')}
            />{' '}
            Metadata document (XML)
          </label>
          <label class="choice">
            <input
              type="radio"
              name="idp-source"
              checked={draft.idpSource === 'manual'}
              onChange={() => set('idpSource')('manual')}
            />{' '}
            Entity ID, sign-on URL and certificate
          </label>
          {samlNeedsIdpAgain && (
            <p class="note">
              orgplane does not return the identity provider's metadata or certificates: give them again to save a
              change.
            </p>
          )}
          {draft.idpSource === 'metadataUrl' && (
            <Field
              label="IdP metadata URL"
              name="idpMetadataUrl"
              type="url"
              value={draft.idpMetadataUrl}
              onInput={set('idpMetadataUrl')}
              error={error}
              autoComplete="off"
              hint="https; fetched when you save, not later."
            />
          )}
          {draft.idpSource === 'metadataXml' && (
            <Field
              label="IdP metadata XML"
              name="idpMetadataXml"
              multiline
              value={draft.idpMetadataXml}
              onInput={set('idpMetadataXml')}
              error={error}
            />
          )}
          {draft.idpSource === 'manual' && (
            <>
              <Field
                label="IdP entity ID"
                name="idpEntityId"
                value={draft.idpEntityId}
                onInput={set('idpEntityId')}
                error={error}
                autoComplete="off"
              />
              <Field
                label="IdP single sign-on URL"
                name="idpSsoUrl"
                type="url"
                value={draft.idpSsoUrl}
                onInput={set('idpSsoUrl')}
                error={error}
                autoComplete="off"
                hint="The HTTP-Redirect binding's URL (https)."
              />
              <Field
                label="IdP signing certificate (PEM)"
                name="idpCertificates.0"
                multiline
                value={draft.certificate}
                onInput={set('certificate')}
                error={error}
              />
              <Field
                label="Second signing certificate (optional, while the IdP rotates its key)"
                name="idpCertificates.1"
                multiline
                required={false}
                value={draft.secondCertificate}
                onInput={set('secondCertificate')}
                error={error}
              />
              {fieldErrors('idpCertificates').map((message) => (
                <p class="field-error">{message}</p>
              ))}
            </>
          )}
        </fieldset>
      )}
      <fieldset>
        <legend>Just-in-time provisioning</legend>
        <label class="choice">
          <input
            type="checkbox"
            checked={draft.jitEnabled}
            onChange={(event) => set('jitEnabled')((event.target as HTMLInputElement).checked)}
          />
          Make people of the domain members at their first SSO sign-in
        </label>
        {draft.jitEnabled && (
          <>
            <div class="field">
              <label for="jit-role">Role of provisioned members</label>
              <select
                id="jit-role"
                value={draft.jitDefaultRole}
                aria-invalid={roleMessages.length > 0}
                onChange={(event) => set('jitDefaultRole')((event.target as HTMLSelectElement).value)}
              >
                <RoleOptions roles={roles.data} />
              </select>
              {roleMessages.map((message) => (
                <p class="field-error">{message}</p>
              ))}
            </div>
            <fieldset>
              <legend>Teams they join</legend>
              {teams.length === 0 && (
                <p class="note">No teams yet: create them on the Teams page to add provisioned members to them.</p>
              )}
              {teams.map((team) => (
                <label class="choice" key={team.id}>
                  <input
                    type="checkbox"
                    checked={draft.jitDefaultTeamIds.includes(team.id)}
                    onChange={(event) =>
                      set('jitDefaultTeamIds')(
                        (event.target as HTMLInputElement).checked
                          ? [...draft.jitDefaultTeamIds, team.id]
                          : draft.jitDefaultTeamIds.filter((id) => id !== team.id),
                      )
                    }
                  />
                  {team.name}
                </label>
              ))}
              {teamMessages.map((message) => (
                <p class="field-error">{message}</p>
              ))}
            </fieldset>
          </>
        )}
      </fieldset>
      {unplaced.length > 0 && (
        <div role="alert" class="form-error">
          {unplaced.map((message) => (
            <p>{message}</p>
          ))}
        </div>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : connection ? 'Save connection' : 'Create connection'}
      </button>
      <p role="status" class="progress">
        {save.status}
      </p>
    </form>
  );
}
