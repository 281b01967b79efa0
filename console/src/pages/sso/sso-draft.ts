// The SSO connection form's draft (sso-connection-form.tsx): made from the stored connection, turned into
// the body of PUT /v1/sso/connection, and the API's messages that name no field of the form.
import { errorMessage, type ApiError, type components } from '../../api.ts';

export type SsoConnection = components['schemas']['SsoConnection'];
type IdpSource = 'metadataUrl' | 'metadataXml' | 'manual';
type EmailTrust = NonNullable<SsoConnection['emailTrust']>;

export interface SsoDraft {
  protocol: 'oidc' | 'saml';
  domain: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  emailTrust: EmailTrust;
  idpSource: IdpSource;
  idpMetadataUrl: string;
  idpMetadataXml: string;
  idpEntityId: string;
  idpSsoUrl: string;
  certificate: string;
  secondCertificate: string;
  jitEnabled: boolean;
  /** 'member', 'admin' or a custom role's id. */
  jitDefaultRole: string;
  jitDefaultTeamIds: string[];
}

export function draftOf(connection: SsoConnection | null): SsoDraft {
  const saml = connection?.protocol === 'saml';
  return {
    protocol: connection?.protocol ?? 'oidc',
    domain: connection?.domain ?? '',
    issuer: saml ? '' : (connection?.issuer ?? ''),
    clientId: connection?.clientId ?? '',
    clientSecret: '',
    emailTrust: connection?.emailTrust ?? 'verified_claim',
    idpSource: saml && !connection?.idpMetadataUrl ? 'manual' : 'metadataUrl',
    idpMetadataUrl: connection?.idpMetadataUrl ?? '',
    idpMetadataXml: '',
    idpEntityId: saml ? connection.issuer : '',
    idpSsoUrl: connection?.idpSsoUrl ?? '',
    certificate: '',
    secondCertificate: '',
    jitEnabled: connection?.jitProvisioning.enabled ?? false,
    jitDefaultRole: connection?.jitProvisioning.defaultRole ?? 'member',
    jitDefaultTeamIds: connection?.jitProvisioning.defaultTeamIds ?? [],
  };
}

/** Who the identity provider is, as the API takes it: a PUT names it every time. */
export function identityOf(draft: SsoDraft) {
  if (draft.protocol === 'oidc') {
    return {
      protocol: 'oidc' as const,
      issuer: draft.issuer,
      clientId: draft.clientId,
      emailTrust: draft.emailTrust,
      ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
    };
  }
  if (draft.idpSource === 'metadataUrl') return { protocol: 'saml' as const, idpMetadataUrl: draft.idpMetadataUrl };
  if (draft.idpSource === 'metadataXml') return { protocol: 'saml' as const, idpMetadataXml: draft.idpMetadataXml };
  const idpCertificates = [draft.certificate, draft.secondCertificate].filter((pem) => pem.trim() !== '');
  return { protocol: 'saml' as const, idpEntityId: draft.idpEntityId, idpSsoUrl: draft.idpSsoUrl, idpCertificates };
}

export function bodyOf(draft: SsoDraft) {
  return {
    domain: draft.domain,
    ...identityOf(draft),
    jitProvisioning: {
      enabled: draft.jitEnabled,
      defaultRole: draft.jitDefaultRole,
      defaultTeamIds: draft.jitDefaultTeamIds,
    },
  };
}

// Fields of the form, for finding the API's messages that name none of them (shown above the button).
const fields = [
  'domain',
  'protocol',
  'issuer',
  'clientId',
  'clientSecret',
  'emailTrust',
  'idpMetadataUrl',
  'idpMetadataXml',
  'idpEntityId',
  'idpSsoUrl',
  'idpCertificates',
  'idpCertificates.0',
  'idpCertificates.1',
  'jitProvisioning.enabled',
  'jitProvisioning.defaultRole',
  'jitProvisioning.defaultTeamIds',
];

export function unplacedMessages(error: ApiError | undefined): string[] {
  if (!error) return [];
  const details = error.details ?? [];
  if (details.length === 0) return [errorMessage(error)];
  const unplaced = details.filter((detail) => !fields.includes(detail.path.join('.'))).map((detail) => detail.message);
  return unplaced.length > 0 ? [error.message ?? error.error, ...unplaced] : [];
}
