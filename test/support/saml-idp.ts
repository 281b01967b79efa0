// A real SAML 2.0 identity provider on loopback for SSO tests: samlify signs the assertions with a key
// and self-signed certificate generated here (selfsigned). It serves its metadata and a single sign-on
// endpoint (HTTP-Redirect in, HTTP-POST out: the auto-submitting form a browser would get). Who signs in
// is set by the test (`signInAs`); `tamper` changes what the next response says, before it is signed,
// and `afterSigning` what it looks like after (signature wrapping, comments), for the refusal tests.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { createRequire } from 'node:module';
import selfsigned from 'selfsigned';

// samlify is loaded without its type declarations: they pull in the DOM's (through @xmldom/xmldom),
// whose fetch, FormData and streams then clash with Node's across the project. The little used of it:
interface SamlifyEntity {
  entityMeta: { getEntityID(): string };
}
interface Samlify {
  IdentityProvider(settings: Record<string, unknown>): SamlifyEntity & {
    getMetadata(): string;
    createLoginResponse(
      sp: SamlifyEntity,
      requestInfo: unknown,
      binding: 'post',
      user: { email: string },
      replace: () => { id: string; context: string },
    ): Promise<{ context: string }>;
  };
  ServiceProvider(settings: { metadata: string }): SamlifyEntity;
}
const samlify = createRequire(import.meta.url)('samlify') as Samlify;

const redirectBinding = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const emailFormat = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface SamlKey {
  privateKey: string;
  certificate: string;
}

/** A 2048-bit RSA key and its self-signed certificate, valid from `notBefore` to `notAfter`. */
export async function generateSamlKey(options: { notBefore?: Date; notAfter?: Date } = {}): Promise<SamlKey> {
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = options.notAfter ?? new Date(Date.now() + 365 * 24 * 3600_000);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'test-idp.example.test' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
  });
  return { privateKey: pems.private, certificate: pems.cert };
}

export interface SamlPerson {
  /** The NameID. */
  nameId: string;
  nameIdFormat?: string;
  /** The `email` attribute (none when undefined). */
  email?: string;
  name?: string;
}

/** What the next response says; each field defaults to what a correct IdP sends. */
export interface ResponseValues {
  responseId: string;
  assertionId: string;
  issuer: string;
  destination: string;
  recipient: string;
  audience: string;
  inResponseTo: string;
  subjectInResponseTo: string;
  issueInstant: string;
  notBefore: string;
  notOnOrAfter: string;
  authnInstant: string;
}

export interface SamlAnswer {
  /** Where the IdP's form posts (the SP's ACS). */
  action: string;
  SAMLResponse: string;
  RelayState: string;
  /** The AuthnRequest the IdP received. */
  request: { id: string; forceAuthn: boolean; xml: string };
}

export interface TestSamlIdp {
  entityId: string;
  ssoUrl: string;
  metadataUrl: string;
  /** The metadata document (entity id, SSO URL, the signing certificate). */
  metadataXml: string;
  key: SamlKey;
  signInAs(person: SamlPerson): void;
  /** Signs with this key from now on (a rotation; the connection must trust its certificate). */
  useKey(key: SamlKey): void;
  /** Changes to the next responses' values (cleared by `reset`). */
  tamper(change: (values: ResponseValues) => Partial<ResponseValues>): void;
  /** Sends the next responses without any signature. */
  unsigned(): void;
  /** Rewrites the next responses' XML after signing. */
  afterSigning(rewrite: (xml: string) => string): void;
  reset(): void;
  /** Follows an authorization URL as a browser would: the IdP's form, its fields read. */
  answer(authorizationUrl: string): Promise<SamlAnswer>;
  close(): Promise<void>;
}

const escapeXml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function responseXml(values: ResponseValues, person: SamlPerson): string {
  const attributes = [
    ...(person.email !== undefined ? [['email', person.email]] : []),
    ...(person.name !== undefined ? [['displayName', person.name]] : []),
  ]
    .map(
      ([name, value]) =>
        `<saml:Attribute Name="${name}"><saml:AttributeValue xsi:type="xs:string">${escapeXml(value!)}</saml:AttributeValue></saml:Attribute>`,
    )
    .join('');
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${values.responseId}" Version="2.0" IssueInstant="${values.issueInstant}" Destination="${escapeXml(values.destination)}" InResponseTo="${escapeXml(values.inResponseTo)}">` +
    `<saml:Issuer>${escapeXml(values.issuer)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${values.assertionId}" Version="2.0" IssueInstant="${values.issueInstant}">` +
    `<saml:Issuer>${escapeXml(values.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${person.nameIdFormat ?? emailFormat}">${escapeXml(person.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${values.notOnOrAfter}" Recipient="${escapeXml(values.recipient)}" InResponseTo="${escapeXml(values.subjectInResponseTo)}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${values.notBefore}" NotOnOrAfter="${values.notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${escapeXml(values.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${values.authnInstant}" SessionIndex="_s${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion></samlp:Response>`
  );
}

/** The AuthnRequest of an HTTP-Redirect URL (deflated, base64). */
export function authnRequestOf(authorizationUrl: string): {
  id: string;
  forceAuthn: boolean;
  acsUrl: string;
  issuer: string;
  xml: string;
} {
  const xml = inflateRawSync(
    Buffer.from(new URL(authorizationUrl).searchParams.get('SAMLRequest')!, 'base64'),
  ).toString('utf8');
  const attribute = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1] ?? '';
  return {
    id: attribute('ID'),
    forceAuthn: attribute('ForceAuthn') === 'true',
    acsUrl: attribute('AssertionConsumerServiceURL'),
    issuer: /<saml:Issuer[^>]*>([^<]*)</.exec(xml)?.[1] ?? '',
    xml,
  };
}

export async function startSamlIdp(options: { key?: SamlKey } = {}): Promise<TestSamlIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${base}/saml/idp`;
  const ssoUrl = `${base}/saml/sso`;
  const firstKey = options.key ?? (await generateSamlKey());
  let key = firstKey;
  let person: SamlPerson = { nameId: 'nobody@example.test' };
  let changes: ((values: ResponseValues) => Partial<ResponseValues>)[] = [];
  let rewrite: ((xml: string) => string) | undefined;
  let sign = true;

  const identityProvider = (signingKey: SamlKey) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: signingKey.privateKey,
      signingCert: signingKey.certificate,
      singleSignOnService: [{ Binding: redirectBinding, Location: ssoUrl }],
      singleLogoutService: [{ Binding: redirectBinding, Location: `${base}/saml/slo` }],
      nameIDFormat: [emailFormat],
    });
  const metadataXml = identityProvider(firstKey).getMetadata();

  /** The IdP's answer to an AuthnRequest: the Response for the current person, signed by samlify (the assertion). */
  async function respond(request: { id: string; acsUrl: string; issuer: string }): Promise<string> {
    // The SP as the IdP knows it: from orgplane's own metadata document (its entity id is that URL).
    const spMetadata = await (await fetch(request.issuer)).text();
    const serviceProvider = samlify.ServiceProvider({ metadata: spMetadata });
    const now = Date.now();
    let values: ResponseValues = {
      responseId: `_r${randomBytes(16).toString('hex')}`,
      assertionId: `_a${randomBytes(16).toString('hex')}`,
      issuer: entityId,
      destination: request.acsUrl,
      recipient: request.acsUrl,
      audience: serviceProvider.entityMeta.getEntityID(),
      inResponseTo: request.id,
      subjectInResponseTo: request.id,
      issueInstant: new Date(now).toISOString(),
      notBefore: new Date(now - 30_000).toISOString(),
      notOnOrAfter: new Date(now + 5 * 60_000).toISOString(),
      authnInstant: new Date(now).toISOString(),
    };
    for (const change of changes) values = { ...values, ...change(values) };
    const xml = responseXml(values, person);
    let signed: string;
    if (sign) {
      const { context } = await identityProvider(key).createLoginResponse(
        serviceProvider,
        { extract: { request: { id: request.id } } },
        'post',
        { email: person.nameId },
        () => ({ id: values.responseId, context: xml }),
      );
      signed = Buffer.from(context, 'base64').toString('utf8');
    } else {
      signed = xml;
    }
    return Buffer.from(rewrite ? rewrite(signed) : signed, 'utf8').toString('base64');
  }

  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname === '/saml/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadataXml);
      return;
    }
    if (url.pathname === '/saml/sso') {
      void (async () => {
        const request = authnRequestOf(url.href);
        const samlResponse = await respond(request);
        const relayState = url.searchParams.get('RelayState') ?? '';
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${escapeXml(request.acsUrl)}">` +
              `<input type="hidden" name="SAMLResponse" value="${samlResponse}"><input type="hidden" name="RelayState" value="${escapeXml(relayState)}">` +
              `<button type="submit">Continue</button></form></body></html>`,
          );
      })().catch((error: unknown) => res.writeHead(500).end(String(error)));
      return;
    }
    res.writeHead(404).end();
  });

  return {
    entityId,
    ssoUrl,
    metadataUrl: `${base}/saml/metadata`,
    metadataXml,
    key: firstKey,
    signInAs(next) {
      person = next;
    },
    useKey(next) {
      key = next;
    },
    tamper(change) {
      changes.push(change);
    },
    unsigned() {
      sign = false;
    },
    afterSigning(next) {
      rewrite = next;
    },
    reset() {
      changes = [];
      rewrite = undefined;
      sign = true;
      key = firstKey;
    },
    async answer(authorizationUrl) {
      const page = await fetch(authorizationUrl);
      const html = await page.text();
      if (page.status !== 200) throw new Error(`IdP: ${page.status} ${html}`);
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
      const request = authnRequestOf(authorizationUrl);
      return {
        action: (/action="([^"]*)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&'),
        SAMLResponse: field('SAMLResponse'),
        RelayState: field('RelayState').replace(/&amp;/g, '&'),
        request: { id: request.id, forceAuthn: request.forceAuthn, xml: request.xml },
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
