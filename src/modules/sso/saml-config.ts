// A SAML connection's identity provider, from what PUT /v1/sso/connection was given: its metadata (XML,
// or a URL fetched through the guarded outbound client), or its entity id, single sign-on URL and
// signing certificates. Each problem is a 400 whose details name the field.
import { X509Certificate } from 'node:crypto';
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js';
import { invalidRequest } from '../../http/errors.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { IdentityProviderSettings } from './store.ts';

const metadataNs = 'urn:oasis:names:tc:SAML:2.0:metadata';
const dsigNs = 'http://www.w3.org/2000/09/xmldsig#';
const redirectBinding = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);
export const maxMetadataBytes = 512 * 1024;
const metadataTimeoutMs = 10_000;

export interface SamlIdpInput {
  idpMetadataXml?: string | undefined;
  idpMetadataUrl?: string | undefined;
  idpEntityId?: string | undefined;
  idpSsoUrl?: string | undefined;
  idpCertificates?: string[] | undefined;
}

export interface SamlIdp {
  entityId: string;
  ssoUrl: string;
  /** PEM, one or two (two while the IdP rotates its key). */
  certificates: string[];
  metadataUrl: string | null;
  /** The earliest expiry of the certificates. */
  certificateExpiresAt: Date;
}

const refuse = (
  path: (string | number)[],
  message: string,
  summary = "The identity provider's settings are not valid",
) => invalidRequest([{ message, path }], summary);

/** https, or plain http to this machine only (development and tests), as for OIDC issuers. */
function checkUrl(value: string, path: (string | number)[]): string {
  if (!URL.canParse(value)) throw refuse(path, 'Must be an absolute URL');
  const url = new URL(value);
  if (url.username || url.password) throw refuse(path, 'Must not carry a user name or password');
  if (url.protocol === 'https:' || (url.protocol === 'http:' && loopbackHosts.has(url.hostname))) return url.href;
  throw refuse(path, 'Must be an https URL');
}

/** A PEM certificate (or its bare base64 body, as metadata carries it), normalized to PEM; refused when unreadable or expired. */
export function readCertificate(
  value: string,
  path: (string | number)[],
  now = new Date(),
): { pem: string; expiresAt: Date } {
  const body = value.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(body))
    throw refuse(
      path,
      'Must be an X.509 certificate in PEM (-----BEGIN CERTIFICATE-----) or base64',
      'The certificate is not valid',
    );
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    throw refuse(
      path,
      'Must be an X.509 certificate in PEM (-----BEGIN CERTIFICATE-----) or base64; this one could not be read',
      'The certificate is not valid',
    );
  }
  const expiresAt = new Date(certificate.validTo);
  if (!(expiresAt > now))
    throw refuse(path, `This certificate expired on ${expiresAt.toISOString()}`, 'The certificate has expired');
  if (certificate.publicKey.asymmetricKeyType !== 'rsa' && certificate.publicKey.asymmetricKeyType !== 'ec') {
    throw refuse(path, "The certificate's key must be RSA or EC", 'The certificate is not valid');
  }
  return { pem, expiresAt };
}

function certificatesOf(values: string[], path: string): { certificates: string[]; expiresAt: Date } {
  if (values.length < 1 || values.length > 2)
    throw refuse([path], 'One certificate, or two while the identity provider rotates its key');
  const read = values.map((value, index) => readCertificate(value, [path, index]));
  return {
    certificates: read.map((c) => c.pem),
    expiresAt: new Date(Math.min(...read.map((c) => c.expiresAt.getTime()))),
  };
}

/** entityID, the HTTP-Redirect single sign-on URL and the signing certificates of IdP metadata. */
export async function parseIdpMetadata(
  xml: string,
  field: string,
): Promise<{ entityId: string; ssoUrl: string; certificates: string[] }> {
  let document: Awaited<ReturnType<typeof parseDomFromString>>;
  try {
    // xmldom, as node-saml uses it; no DTDs or external entities are resolved.
    if (/<!DOCTYPE/i.test(xml)) throw new Error('DOCTYPE');
    document = await parseDomFromString(xml);
  } catch {
    throw refuse(
      [field],
      'Not readable as XML (a document type declaration is not accepted)',
      "The identity provider's metadata is not valid",
    );
  }
  const descriptors = xpath.selectElements(
    document,
    `//*[local-name()='EntityDescriptor' and namespace-uri()='${metadataNs}']`,
  );
  if (descriptors.length !== 1)
    throw refuse(
      [field],
      'Must hold exactly one EntityDescriptor (metadata of one identity provider)',
      "The identity provider's metadata is not valid",
    );
  const entity = descriptors[0]!;
  const entityId = entity.getAttribute('entityID') ?? '';
  const idp = xpath.selectElements(
    entity,
    `./*[local-name()='IDPSSODescriptor' and namespace-uri()='${metadataNs}']`,
  )[0];
  if (!entityId || !idp)
    throw refuse(
      [field],
      'Must have an entityID and an IDPSSODescriptor',
      "The identity provider's metadata is not valid",
    );
  const sso = xpath
    .selectElements(idp, `./*[local-name()='SingleSignOnService' and namespace-uri()='${metadataNs}']`)
    .find((service) => service.getAttribute('Binding') === redirectBinding);
  if (!sso?.getAttribute('Location'))
    throw refuse(
      [field],
      'Must have a SingleSignOnService with the HTTP-Redirect binding',
      "The identity provider's metadata is not valid",
    );
  const keys = xpath
    .selectElements(idp, `./*[local-name()='KeyDescriptor' and namespace-uri()='${metadataNs}']`)
    .filter((key) => (key.getAttribute('use') ?? 'signing') === 'signing');
  const certificates = keys
    .flatMap((key) => xpath.selectElements(key, `.//*[local-name()='X509Certificate' and namespace-uri()='${dsigNs}']`))
    .map((node) => node.textContent ?? '');
  if (certificates.length === 0)
    throw refuse(
      [field],
      'Must have a signing KeyDescriptor with an X509Certificate',
      "The identity provider's metadata is not valid",
    );
  return {
    entityId,
    ssoUrl: sso.getAttribute('Location')!,
    certificates: [...new Set(certificates.map((c) => c.replace(/\s+/g, '')))],
  };
}

async function fetchMetadata(outbound: Pick<OutboundClient, 'fetch'>, url: string): Promise<string> {
  let response: Response;
  try {
    response = await outbound.fetch(url, {
      headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' },
      redirect: 'manual',
      timeoutMs: metadataTimeoutMs,
      maxResponseBytes: maxMetadataBytes,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'unknown error';
    throw refuse(
      ['idpMetadataUrl'],
      `The metadata could not be fetched: ${reason.slice(0, 200)}`,
      "The identity provider's metadata could not be fetched",
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw refuse(
      ['idpMetadataUrl'],
      `The metadata could not be fetched: the server answered ${response.status}`,
      "The identity provider's metadata could not be fetched",
    );
  }
  try {
    return await response.text();
  } catch {
    throw refuse(
      ['idpMetadataUrl'],
      `The metadata is larger than ${maxMetadataBytes} bytes or could not be read`,
      "The identity provider's metadata could not be fetched",
    );
  }
}

/** The identity provider a SAML connection is to use, from exactly one of the three ways to name it. */
export async function resolveSamlIdp(input: SamlIdpInput, outbound: Pick<OutboundClient, 'fetch'>): Promise<SamlIdp> {
  const manual =
    input.idpEntityId !== undefined || input.idpSsoUrl !== undefined || input.idpCertificates !== undefined;
  const ways = [input.idpMetadataXml !== undefined, input.idpMetadataUrl !== undefined, manual].filter(Boolean).length;
  if (ways !== 1) {
    throw refuse(
      [],
      'A SAML connection takes idpMetadataXml, or idpMetadataUrl, or idpEntityId with idpSsoUrl and idpCertificates: exactly one of them',
      'The identity provider is not named, or named twice',
    );
  }
  let described: { entityId: string; ssoUrl: string; certificates: string[] };
  let metadataUrl: string | null = null;
  // Where a problem with each value is reported: the metadata field it came from, or the value's own field.
  let fields = { entityId: 'idpEntityId', ssoUrl: 'idpSsoUrl', certificates: 'idpCertificates' };
  if (input.idpMetadataXml !== undefined) {
    fields = { entityId: 'idpMetadataXml', ssoUrl: 'idpMetadataXml', certificates: 'idpMetadataXml' };
    described = await parseIdpMetadata(input.idpMetadataXml, 'idpMetadataXml');
  } else if (input.idpMetadataUrl !== undefined) {
    fields = { entityId: 'idpMetadataUrl', ssoUrl: 'idpMetadataUrl', certificates: 'idpMetadataUrl' };
    metadataUrl = checkUrl(input.idpMetadataUrl, ['idpMetadataUrl']);
    described = await parseIdpMetadata(await fetchMetadata(outbound, metadataUrl), 'idpMetadataUrl');
  } else {
    for (const name of ['idpEntityId', 'idpSsoUrl', 'idpCertificates'] as const) {
      if (input[name] === undefined)
        throw refuse(
          [name],
          `Required with ${['idpEntityId', 'idpSsoUrl', 'idpCertificates'].filter((n) => n !== name).join(' and ')}`,
        );
    }
    described = { entityId: input.idpEntityId!, ssoUrl: input.idpSsoUrl!, certificates: input.idpCertificates! };
  }
  const ssoUrl = checkUrl(described.ssoUrl, [fields.ssoUrl]);
  const { certificates, expiresAt } = certificatesOf(described.certificates, fields.certificates);
  if (!described.entityId.trim() || described.entityId.length > 1024)
    throw refuse([fields.entityId], 'The entity id must be 1 to 1024 characters');
  return { entityId: described.entityId, ssoUrl, certificates, metadataUrl, certificateExpiresAt: expiresAt };
}

/** The identity provider settings a PUT gives: OIDC's issuer and client, or a SAML IdP. */
export async function identityProviderOf(
  input: SamlIdpInput & {
    protocol: 'oidc' | 'saml';
    issuer?: string | undefined;
    clientId?: string | undefined;
    clientSecret?: string | undefined;
    emailTrust?: string | undefined;
  },
  outbound: Pick<OutboundClient, 'fetch'>,
): Promise<IdentityProviderSettings> {
  const samlFields = ['idpMetadataXml', 'idpMetadataUrl', 'idpEntityId', 'idpSsoUrl', 'idpCertificates'] as const;
  if (input.protocol === 'oidc') {
    const misplaced = samlFields.find((name) => input[name] !== undefined);
    if (misplaced)
      throw refuse([misplaced], 'Only for protocol "saml"', 'A SAML setting was given for an OIDC connection');
    for (const name of ['issuer', 'clientId'] as const) {
      if (input[name] === undefined) throw refuse([name], 'Required for protocol "oidc"', `The ${name} is missing`);
    }
    return {
      protocol: 'oidc',
      issuer: input.issuer!,
      clientId: input.clientId!,
      samlIdpSsoUrl: null,
      samlIdpCertificates: [],
      samlIdpMetadataUrl: null,
      certificateExpiresAt: null,
    };
  }
  const misplaced = (['issuer', 'clientId', 'clientSecret'] as const).find((name) => input[name] !== undefined);
  if (misplaced)
    throw refuse(
      [misplaced],
      'Only for protocol "oidc"; a SAML connection names its identity provider with idpMetadataXml, idpMetadataUrl, or idpEntityId, idpSsoUrl and idpCertificates',
      'An OIDC setting was given for a SAML connection',
    );
  if (input.emailTrust !== undefined) {
    throw refuse(
      ['emailTrust'],
      'Only for protocol "oidc"; a SAML assertion has no "verified" flag: its e-mail must be in the verified domain',
      'An OIDC setting was given for a SAML connection',
    );
  }
  const idp = await resolveSamlIdp(input, outbound);
  return {
    protocol: 'saml',
    issuer: idp.entityId,
    clientId: null,
    samlIdpSsoUrl: idp.ssoUrl,
    samlIdpCertificates: idp.certificates,
    samlIdpMetadataUrl: idp.metadataUrl,
    certificateExpiresAt: idp.certificateExpiresAt,
  };
}
