// The fields of a connection (create and edit): every field the API takes, the API's messages beside
// the field they name, and the identity fields locked when a marketplace plugin manages them.
import type { ApiError } from '../../api.ts';
import { Field } from '../../forms.tsx';
import { authTypeLabels, credentialModeLabels, type Connection } from './mcp-parts.tsx';

export interface Draft {
  name: string;
  url: string;
  authType: Connection['authType'];
  credentialMode: Connection['credentialMode'];
  apiKey: string;
  clientId: string;
  clientSecret: string;
  tokenEndpointAuthMethod: '' | NonNullable<Connection['oauthTokenEndpointAuthMethod']>;
  grantType: NonNullable<Connection['oauthGrantType']>;
  privateKey: string;
  signingAlgorithm: '' | NonNullable<Connection['oauthClientSigningAlgorithm']>;
  issuer: string;
  scopes: string;
}

export const emptyDraft: Draft = {
  name: '',
  url: '',
  authType: 'none',
  credentialMode: 'shared',
  apiKey: '',
  clientId: '',
  clientSecret: '',
  tokenEndpointAuthMethod: '',
  grantType: 'authorization_code',
  privateKey: '',
  signingAlgorithm: '',
  issuer: '',
  scopes: '',
};

export function draftOf(connection: Connection): Draft {
  return {
    ...emptyDraft,
    name: connection.name,
    url: connection.url,
    authType: connection.authType,
    credentialMode: connection.credentialMode,
    // Only a pre-registered client is the administrator's to edit; one obtained automatically is not sent back.
    clientId: connection.oauthRegistrationSource === 'pre-registered' ? (connection.oauthClientId ?? '') : '',
    tokenEndpointAuthMethod:
      connection.oauthRegistrationSource === 'pre-registered' ? (connection.oauthTokenEndpointAuthMethod ?? '') : '',
    grantType: connection.oauthGrantType ?? 'authorization_code',
    signingAlgorithm: connection.oauthClientSigningAlgorithm ?? '',
    issuer: connection.authorizationServerIssuer ?? '',
    scopes: (connection.requestedScopes ?? []).join(' '),
  };
}

/**
 * The request body's connection fields. Secrets are sent only when typed (blank keeps the stored one);
 * on an edit a cleared issuer is sent as null, which removes it.
 */
export function bodyOf(draft: Draft, editing: boolean) {
  const oauth = draft.authType === 'oauth';
  return {
    name: draft.name,
    url: draft.url,
    authType: draft.authType,
    credentialMode: draft.credentialMode,
    ...(draft.authType === 'apikey' && draft.apiKey ? { apiKey: draft.apiKey } : {}),
    ...(oauth && draft.clientId
      ? {
          oauthClient: {
            clientId: draft.clientId,
            ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
            ...(draft.tokenEndpointAuthMethod ? { tokenEndpointAuthMethod: draft.tokenEndpointAuthMethod } : {}),
            ...(draft.privateKey ? { privateKey: draft.privateKey } : {}),
            ...(draft.signingAlgorithm ? { signingAlgorithm: draft.signingAlgorithm } : {}),
            grantType: draft.grantType,
          },
        }
      : {}),
    ...(oauth && (draft.issuer || editing) ? { authorizationServerIssuer: draft.issuer || null } : {}),
    ...(oauth ? { requestedScopes: draft.scopes.split(/\s+/).filter(Boolean) } : {}),
  };
}

/** The API's messages for a field and anything under it (requestedScopes.3, say). */
export function messagesUnder(error: ApiError | undefined, field: string): string[] {
  return (error?.details ?? [])
    .filter((detail) => detail.path.join('.') === field || detail.path.join('.').startsWith(`${field}.`))
    .map((detail) => detail.message);
}

interface SelectProps<T extends string> {
  label: string;
  name: string;
  value: T;
  options: Record<T, string>;
  onChange: (value: T) => void;
  error: ApiError | undefined;
  disabled?: boolean;
  describedBy?: string | undefined;
}

function Select<T extends string>({
  label,
  name,
  value,
  options,
  onChange,
  error,
  disabled,
  describedBy,
}: SelectProps<T>) {
  const messages = messagesUnder(error, name);
  const id = `field-${name}`;
  const described = [messages.length > 0 ? `${id}-error` : '', describedBy ?? ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        disabled={disabled}
        aria-invalid={messages.length > 0}
        aria-describedby={described || undefined}
        onChange={(event) => onChange((event.target as HTMLSelectElement).value as T)}
      >
        {(Object.keys(options) as T[]).map((key) => (
          <option key={key} value={key}>
            {options[key]}
          </option>
        ))}
      </select>
      {messages.length > 0 && (
        <p id={`${id}-error`} class="field-error">
          {messages.join(' ')}
        </p>
      )}
    </div>
  );
}

interface FieldsProps {
  draft: Draft;
  onChange: (draft: Draft) => void;
  error: ApiError | undefined;
  editing: boolean;
  /** The plugins that manage url, authType and credentialMode (a 409 marketplace_managed otherwise). */
  managedBy: string[];
}

export function ConnectionFields({ draft, onChange, error, editing, managedBy }: FieldsProps) {
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      onChange({ ...draft, [key]: value });
  const locked = managedBy.length > 0;
  const lockNote = locked
    ? `Locked: managed by the plugin ${managedBy.join(', ')}, which owns the URL, authentication and credential mode. Uninstall it to change them.`
    : undefined;
  const scopeMessages = messagesUnder(error, 'requestedScopes');
  return (
    <>
      <Field label="Name" name="name" value={draft.name} onInput={set('name')} error={error} autoComplete="off" />
      <div class={locked ? 'locked' : undefined}>
        {locked ? (
          <div class="field">
            <label for="field-url">Server URL</label>
            <input id="field-url" name="url" value={draft.url} readOnly aria-describedby="field-url-lock" />
            <p class="note" id="field-url-lock">
              {lockNote}
            </p>
          </div>
        ) : (
          <Field
            label="Server URL"
            name="url"
            type="url"
            value={draft.url}
            onInput={set('url')}
            error={error}
            autoComplete="off"
          />
        )}
        <Select
          label="Authentication"
          name="authType"
          value={draft.authType}
          options={authTypeLabels}
          onChange={set('authType')}
          error={error}
          disabled={locked}
          describedBy={locked ? 'field-url-lock' : undefined}
        />
        <Select
          label="Credential mode"
          name="credentialMode"
          value={draft.credentialMode}
          options={credentialModeLabels}
          onChange={set('credentialMode')}
          error={error}
          disabled={locked}
          describedBy={locked ? 'field-url-lock' : undefined}
        />
      </div>
      {draft.authType === 'apikey' && (
        <Field
          label={
            editing
              ? 'New API key (blank keeps the stored one)'
              : draft.credentialMode === 'shared'
                ? 'API key'
                : 'Your API key (optional; each member stores their own)'
          }
          name="apiKey"
          type="password"
          value={draft.apiKey}
          onInput={set('apiKey')}
          error={error}
          autoComplete="new-password"
          required={!editing && draft.credentialMode === 'shared'}
        />
      )}
      {draft.authType === 'oauth' && (
        <fieldset class="oauth-fields">
          <legend>OAuth (optional: without a client the server's discovery and registration are used)</legend>
          <Field
            label="Pre-registered client ID"
            name="oauthClient.clientId"
            value={draft.clientId}
            onInput={set('clientId')}
            error={error}
            autoComplete="off"
            required={false}
          />
          <Field
            label={editing ? 'Client secret (blank keeps the stored one)' : 'Client secret'}
            name="oauthClient.clientSecret"
            type="password"
            value={draft.clientSecret}
            onInput={set('clientSecret')}
            error={error}
            autoComplete="new-password"
            required={false}
          />
          <Select
            label="Grant"
            name="oauthClient.grantType"
            value={draft.grantType}
            options={{
              authorization_code: 'Authorization code (a person signs in at the server)',
              client_credentials: 'Client credentials (the client alone, no browser; shared only)',
            }}
            onChange={set('grantType')}
            error={error}
          />
          <Select
            label="Token endpoint authentication"
            name="oauthClient.tokenEndpointAuthMethod"
            value={draft.tokenEndpointAuthMethod}
            options={{
              '': 'As the server advertises',
              client_secret_basic: 'client_secret_basic',
              client_secret_post: 'client_secret_post',
              private_key_jwt: 'private_key_jwt (a signed assertion)',
            }}
            onChange={set('tokenEndpointAuthMethod')}
            error={error}
          />
          <Field
            label={
              editing
                ? 'Private key, PEM, for private_key_jwt (blank keeps the stored one)'
                : 'Private key, PEM, for private_key_jwt'
            }
            name="oauthClient.privateKey"
            multiline
            value={draft.privateKey}
            onInput={set('privateKey')}
            error={error}
            autoComplete="off"
            required={false}
          />
          <Select
            label="Signing algorithm"
            name="oauthClient.signingAlgorithm"
            value={draft.signingAlgorithm}
            options={{
              '': 'From the key',
              RS256: 'RS256',
              RS384: 'RS384',
              RS512: 'RS512',
              PS256: 'PS256',
              PS384: 'PS384',
              PS512: 'PS512',
              ES256: 'ES256',
              ES384: 'ES384',
              ES512: 'ES512',
              EdDSA: 'EdDSA',
            }}
            onChange={set('signingAlgorithm')}
            error={error}
          />
          <Field
            label="Authorization server issuer (when the server does not advertise one)"
            name="authorizationServerIssuer"
            type="url"
            value={draft.issuer}
            onInput={set('issuer')}
            error={error}
            autoComplete="off"
            required={false}
          />
          <div class="field">
            <label for="field-requestedScopes">Requested scopes (separated by spaces)</label>
            <input
              id="field-requestedScopes"
              name="requestedScopes"
              value={draft.scopes}
              autoComplete="off"
              aria-invalid={scopeMessages.length > 0}
              aria-describedby={scopeMessages.length > 0 ? 'field-requestedScopes-error' : undefined}
              onInput={(event) => set('scopes')((event.target as HTMLInputElement).value)}
            />
            {scopeMessages.length > 0 && (
              <p id="field-requestedScopes-error" class="field-error">
                {scopeMessages.join(' ')}
              </p>
            )}
          </div>
        </fieldset>
      )}
    </>
  );
}
