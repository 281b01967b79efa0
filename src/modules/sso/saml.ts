// The SAML 2.0 service provider, through @node-saml/node-saml: the AuthnRequest (HTTP-Redirect binding)
// and its request id kept in the database, the SP metadata, and the checks of the IdP's response. The
// XML signature is node-saml's to check (the assertion must be signed by one of the connection's
// certificates; exactly one assertion); its audience and its NotBefore/NotOnOrAfter times within
// SSO_CLOCK_SKEW_SECONDS too. Read only from the signed assertion node-saml hands back, this file then
// checks what node-saml leaves to its caller: the Issuer, the bearer confirmation's Recipient (the ACS)
// and InResponseTo (the request orgplane made), the response's Destination, and, for a step-up, how
// recent the authentication was.
import { randomBytes } from 'node:crypto';
import {
  generateServiceProviderMetadata,
  SAML,
  SamlStatusError,
  ValidateInResponseTo,
  type CacheProvider,
  type Profile,
} from '@node-saml/node-saml';
import { parseDomFromString } from '@node-saml/node-saml/lib/xml.js';
import type { Database } from '../../db/database.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import { createSamlStore, type SamlRequestRow } from './saml-store.ts';
import type { OpenedSignIn, PendingSignIn } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';

export const samlAcsPath = '/v1/auth/sso/saml/acs';
export const samlMetadataPath = (connectionId: string) => `/v1/sso/saml/${encodeURIComponent(connectionId)}/metadata`;
/** A sign-in at the IdP must come back within this long (as for OIDC). */
const requestTtlSeconds = 10 * 60;
/** A step-up: the person must have authenticated at the IdP this recently. */
const stepUpMaxAgeSeconds = 5 * 60;
const bearer = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const emailFormat = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
// Where IdPs put the e-mail address: the common attribute names, Entra ID's claim URI, and the LDAP mail OID.
const emailAttributes = [
  'email',
  'mail',
  'emailAddress',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
];
const nameAttributes = [
  'displayName',
  'name',
  'http://schemas.microsoft.com/identity/claims/displayname',
  'urn:oid:2.16.840.1.113730.3.1.241',
];

/** A refused IdP answer: a category for the connection's health, and a message that quotes nothing of the assertion. */
export class SamlRejected extends Error {
  readonly category: string;
  constructor(category: string, message: string) {
    super(message);
    this.category = category;
  }
}

/** What a checked assertion says of the person. */
export interface SamlIdentity {
  /** The NameID: the subject linked to the account. */
  subject: string;
  email: string | undefined;
  name: string | undefined;
  assertionId: string;
  /** Until when the assertion could be presented (its bearer confirmation's NotOnOrAfter). */
  expiresAt: Date;
}

export interface SamlServiceProviderDeps {
  db: Database;
  publicUrl: string;
  clockSkewSeconds: number;
}

// biome-ignore lint/suspicious/noExplicitAny: xml2js output, walked by the shape checks of saml-xml-shape.ts
type Xml = Record<string, any>;
const first = (value: unknown): Xml | undefined => (Array.isArray(value) ? value[0] : undefined);
const text = (value: unknown): string | undefined => {
  const node = first(value);
  if (typeof node === 'string') return node;
  return typeof node?._ === 'string' ? node._ : undefined;
};
/** node-saml's messages, without the values it quotes from the assertion (an audience, say). */
const withoutQuotes = (message: string) => message.split(/\.? Expected:|\.? Received:/)[0]!.slice(0, 200);

export function createSamlServiceProvider(deps: SamlServiceProviderDeps) {
  const store = createSamlStore();
  const acsUrl = `${deps.publicUrl}${samlAcsPath}`;
  const spEntityId = (connectionId: string) => `${deps.publicUrl}${samlMetadataPath(connectionId)}`;

  /** node-saml for one connection; `request` is the one sign-in whose id an answer may carry. */
  function serviceProvider(
    connection: SsoConnectionRow,
    options: { requestId?: string; request?: SamlRequestRow; forceAuthn?: boolean } = {},
  ): SAML {
    // The request ids live in the database (sso_saml_requests); node-saml only asks whether the one it read is ours.
    const cacheProvider: CacheProvider = {
      saveAsync: async () => null,
      getAsync: async (key) =>
        options.request && key === options.request.request_id ? options.request.created_at.toISOString() : null,
      removeAsync: async () => null,
    };
    return new SAML({
      issuer: spEntityId(connection.id),
      audience: spEntityId(connection.id),
      callbackUrl: acsUrl,
      entryPoint: connection.saml_idp_sso_url ?? undefined,
      idpCert: connection.saml_idp_certificates,
      idpIssuer: connection.issuer,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: deps.clockSkewSeconds * 1000,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: requestTtlSeconds * 1000,
      cacheProvider,
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      forceAuthn: options.forceAuthn ?? false,
      signatureAlgorithm: 'sha256',
      ...(options.requestId ? { generateUniqueId: () => options.requestId! } : {}),
    });
  }

  /** The assertion's claims, from the signed XML node-saml verified; every check node-saml leaves to us. */
  async function checkAssertion(
    connection: SsoConnectionRow,
    request: SamlRequestRow,
    profile: Profile,
  ): Promise<SamlIdentity> {
    const assertion = (profile.getAssertion?.() as Xml | undefined)?.Assertion as Xml | undefined;
    if (!assertion)
      throw new SamlRejected('assertion_rejected', "The identity provider's answer holds no signed assertion.");
    if (text(assertion.Issuer) !== connection.issuer)
      throw new SamlRejected('assertion_rejected', 'The assertion was issued by another identity provider (Issuer).');
    const assertionId = assertion.$?.ID;
    if (typeof assertionId !== 'string' || !assertionId)
      throw new SamlRejected('assertion_rejected', 'The assertion has no ID.');
    const subject = first(assertion.Subject);
    const nameId = first(subject?.NameID);
    const nameIdValue = text(subject?.NameID);
    if (!nameIdValue) throw new SamlRejected('assertion_rejected', 'The assertion names nobody (no NameID).');
    const confirmations: Xml[] = Array.isArray(subject?.SubjectConfirmation) ? subject.SubjectConfirmation : [];
    const bearerData = confirmations
      .filter((c) => c.$?.Method === bearer)
      .map((c) => first(c.SubjectConfirmationData)?.$ as Xml | undefined);
    if (!bearerData.some((data) => data?.Recipient === acsUrl))
      throw new SamlRejected(
        'assertion_rejected',
        "The assertion is meant for another service (its Recipient is not this server's ACS URL).",
      );
    const confirmation = bearerData.find(
      (data) => data?.Recipient === acsUrl && data?.InResponseTo === request.request_id,
    );
    if (!confirmation)
      throw new SamlRejected('assertion_rejected', 'The assertion does not answer this sign-in (InResponseTo).');
    const expiresAt = new Date(String(confirmation.NotOnOrAfter ?? ''));
    if (Number.isNaN(expiresAt.getTime()))
      throw new SamlRejected('assertion_rejected', "The assertion's bearer confirmation has no NotOnOrAfter.");
    // The response's Destination: outside the signed assertion unless the whole response is signed, and
    // then a second statement of where it was sent; it must name this ACS.
    const response = await parseDomFromString(profile.getSamlResponseXml?.() ?? '');
    if (response.documentElement?.getAttribute('Destination') !== acsUrl) {
      throw new SamlRejected(
        'assertion_rejected',
        "The response was sent to another address (its Destination is not this server's ACS URL).",
      );
    }
    if (request.reauthenticate) {
      const authnInstant = Date.parse(String(first(assertion.AuthnStatement)?.$?.AuthnInstant ?? ''));
      if (!(authnInstant >= Date.now() - (stepUpMaxAgeSeconds + deps.clockSkewSeconds) * 1000)) {
        throw new SamlRejected(
          'reauthentication_required',
          'The identity provider did not ask you to sign in again; a fresh sign-in is needed.',
        );
      }
    }
    const attribute = (names: string[]) => {
      const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
      for (const name of names) {
        const value = attributes[name];
        const single = Array.isArray(value) ? value[0] : value;
        if (typeof single === 'string' && single.trim()) return single.trim();
      }
      return undefined;
    };
    const email = attribute(emailAttributes) ?? (nameId?.$?.Format === emailFormat ? nameIdValue : undefined);
    return { subject: nameIdValue, email, name: attribute(nameAttributes), assertionId, expiresAt };
  }

  return {
    acsUrl,
    spEntityId,
    metadataUrl: spEntityId,

    /** The SP metadata an IdP administrator imports: entity id, ACS (HTTP-POST), signed assertions wanted. */
    metadataXml(connection: Pick<SsoConnectionRow, 'id'>): string {
      return generateServiceProviderMetadata({
        issuer: spEntityId(connection.id),
        callbackUrl: acsUrl,
        identifierFormat: null,
        wantAssertionsSigned: true,
      });
    },

    /**
     * Stores a new sign-in's request with what `link` keeps of the IdP URL that carries the AuthnRequest
     * (and ForceAuthn for a step-up): the sign-in's link sends the browser there (sign-in.ts).
     */
    async startRequest(
      connection: SsoConnectionRow,
      input: { redirectUri: string; codeChallenge: string; reauthenticate: boolean },
      link: (idpUrl: string) => Pick<SamlRequestRow, 'authorize_hash' | 'authorization_url_sealed'>,
    ): Promise<void> {
      const requestId = `_${randomBytes(20).toString('hex')}`;
      const relayState = randomToken();
      const idpUrl = await serviceProvider(connection, {
        requestId,
        forceAuthn: input.reauthenticate,
      }).getAuthorizeUrlAsync(relayState, undefined, {});
      await store.insertRequest(deps.db, {
        relay_state_hash: hashToken(relayState),
        request_id: requestId,
        organization_id: connection.organization_id,
        connection_id: connection.id,
        redirect_uri: input.redirectUri,
        client_code_challenge: input.codeChallenge,
        reauthenticate: input.reauthenticate,
        ...link(idpUrl),
        ttlSeconds: requestTtlSeconds,
      });
    },

    /** Opens a SAML sign-in's link in a browser (the link's id and the browser's secret, hashed). */
    openRequest(authorizeHash: string, bindingHash: string): Promise<OpenedSignIn | undefined> {
      return store.openRequest(deps.db, authorizeHash, bindingHash);
    },

    /** The live sign-in a RelayState names, without taking it. */
    pendingRequest(relayState: string): Promise<PendingSignIn | undefined> {
      return store.pendingRequest(deps.db, hashToken(relayState));
    },

    /** Takes the sign-in a RelayState names: once, and only before it expires. */
    takeRequest(relayState: string): Promise<SamlRequestRow | undefined> {
      return store.takeRequest(deps.db, hashToken(relayState));
    },

    /** Checks the IdP's SAMLResponse (base64) against the connection and the request it must answer. Throws SamlRejected. */
    async validate(connection: SsoConnectionRow, request: SamlRequestRow, samlResponse: string): Promise<SamlIdentity> {
      let profile: Profile | null;
      try {
        ({ profile } = await serviceProvider(connection, { request }).validatePostResponseAsync({
          SAMLResponse: samlResponse,
        }));
      } catch (error) {
        const message = error instanceof Error ? withoutQuotes(error.message) : 'unknown error';
        // A status other than Success: the IdP itself refused (or the person cancelled), as OIDC's `error`.
        if (error instanceof SamlStatusError)
          throw new SamlRejected('idp_error', `The identity provider refused the sign-in (${message.slice(0, 120)}).`);
        throw new SamlRejected('assertion_rejected', `The identity provider's answer was refused: ${message}.`);
      }
      if (!profile) throw new SamlRejected('assertion_rejected', "The identity provider's answer holds no assertion.");
      try {
        return await checkAssertion(connection, request, profile);
      } catch (error) {
        if (error instanceof SamlRejected) throw error;
        throw new SamlRejected('assertion_rejected', "The identity provider's answer could not be read.");
      }
    },

    /** Records the assertion as used until it expires; false when it was used before (a replay), by any process. */
    recordAssertion(connection: SsoConnectionRow, identity: SamlIdentity): Promise<boolean> {
      const keptUntil = new Date(identity.expiresAt.getTime() + deps.clockSkewSeconds * 1000);
      return store.recordAssertion(deps.db, {
        connectionId: connection.id,
        organizationId: connection.organization_id,
        assertionId: identity.assertionId,
        expiresAt: keptUntil,
      });
    },
  };
}

export type SamlServiceProvider = ReturnType<typeof createSamlServiceProvider>;
