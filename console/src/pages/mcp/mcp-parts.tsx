// What the MCP connection pages share: the types they read, the words for the API's enums, and the
// diagnostic of a failed probe (what failed, how far the check got, and who must act).
import { api, type ApiError, type components } from '../../api.ts';

export type Connection = components['schemas']['McpConnection'];
export type Diagnostic = components['schemas']['Diagnostic'];
export type AccessInput = components['schemas']['AccessInput'];
export type Catalog = components['schemas']['McpToolCatalog'];

export const authTypeLabels: Record<Connection['authType'], string> = {
  none: 'No authentication',
  apikey: 'API key',
  oauth: 'OAuth',
};
export const credentialModeLabels: Record<Connection['credentialMode'], string> = {
  shared: 'Shared (one credential for the organization)',
  per_member: 'Per member (each member connects their own)',
};

// Who must act, in a person's words; an owner the console does not know yet is shown as the API names it.
const actionOwnerLabels: Record<string, string> = {
  vendor: "The MCP server's vendor",
  network_admin: 'Your network administrator',
  provider_admin: "The provider's administrator (the authorization server)",
  organization_admin: 'An owner or admin of this organization',
  member: 'The member who connects',
};

const healthReasons: Record<string, string> = {
  authorization_rejected: 'the server refused the credential',
  credential_expired: 'the credential expired and could not be refreshed',
  post_authorization_validation_failed: 'the credential failed the check after authorization',
};

/** The health of the credential the caller would use, in words. */
export function healthText(connection: Connection): string {
  if (connection.authType !== 'none' && !connection.connectedForMe) {
    return connection.credentialMode === 'per_member'
      ? 'Not connected: connect your account'
      : 'Not connected: an admin must connect it';
  }
  switch (connection.credentialHealth) {
    case 'ready':
      return 'Ready';
    case 'reconnect_required': {
      const why = healthReasons[connection.credentialHealthReason ?? ''] ?? 'the credential no longer works';
      const who = connection.reconnectActionOwner === 'member' ? 'you must reconnect' : 'an admin must reconnect';
      return `Reconnect required: ${why}; ${who}`;
    }
    default:
      return 'Not checked yet: run a test';
  }
}

/** A failed validation or test answer carries its diagnostic beside the error. */
export function diagnosticOf(error: ApiError | undefined): Diagnostic | undefined {
  return (error as { diagnostic?: Diagnostic } | undefined)?.diagnostic;
}

export function DiagnosticView({ diagnostic, title }: { diagnostic: Diagnostic; title: string }) {
  return (
    <section class="diagnostic" role="alert" aria-label={title}>
      <h3>{title}</h3>
      <p>{diagnostic.message}</p>
      <dl>
        <dt>Failed at</dt>
        <dd>
          phase {diagnostic.phase} ({diagnostic.category}: {diagnostic.code}
          {diagnostic.httpStatus ? `, HTTP ${diagnostic.httpStatus}` : ''})
        </dd>
        <dt>Passed up to</dt>
        <dd>{diagnostic.highestPassed}</dd>
        <dt>Who must act</dt>
        <dd>{actionOwnerLabels[diagnostic.actionOwner] ?? diagnostic.actionOwner}</dd>
        <dt>What to do</dt>
        <dd>{diagnostic.operatorAction}</dd>
        <dt>Retry</dt>
        <dd>{diagnostic.retryable ? 'Worth retrying once that is done, or later' : 'Retrying alone will not help'}</dd>
        <dt>Reference</dt>
        <dd>
          <code>{diagnostic.referenceId}</code>
        </dd>
      </dl>
    </section>
  );
}

export async function loadConnection(connectionId: string) {
  return api.GET('/v1/mcp-connections/{connectionId}', { params: { path: { connectionId } } });
}
