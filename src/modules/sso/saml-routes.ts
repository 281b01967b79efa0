// HTTP of SAML: the SP metadata an IdP administrator imports (public), and the assertion consumer
// service the person's browser posts the IdP's answer to (a redirect, or a readable page when refused,
// whatever arrives: a form, another content type, a body too large).
import { publicAccess } from '../../http/auth.ts';
import type { FastifyError } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { htmlPageHeaders } from '../../http/html-page.ts';
import { errorResponse } from '../../http/schemas.ts';
import { bindingSecretOf } from '../../platform/browser-binding.ts';
import type { SamlAcs } from './saml-acs.ts';
import { samlAcsPath, type SamlServiceProvider } from './saml.ts';
import { createSamlStore } from './saml-store.ts';
import { accountLinkingRule, refusedPage } from './sign-in-routes.ts';
import { codeTtlSeconds, ssoBrowserCookie } from './sign-in.ts';
import { SignInRefused } from './sign-in-refusals.ts';
import type { Database } from '../../db/database.ts';
import { ssoErrors } from './error-codes.ts';

const tags = ['SSO'];
/** A SAMLResponse is a signed XML document, base64: tens of kilobytes at most in practice. */
const maxFormBytes = 512 * 1024;

export const samlRoutes: FastifyPluginAsyncZod<{ db: Database; saml: SamlServiceProvider; acs: SamlAcs }> = async (
  app,
  { db, saml, acs },
) => {
  const store = createSamlStore();

  app.get(
    '/v1/sso/saml/:ssoConnectionId/metadata',
    {
      schema: {
        tags,
        operationId: 'getSsoSamlMetadata',
        ...publicAccess,
        summary: 'The SAML service provider metadata of an SSO connection',
        description:
          'Public: give this URL (or the document) to the identity provider. Its entity id is this URL, also the `spEntityId` and the audience ' +
          'assertions must name; the assertion consumer service is `POST /v1/auth/sso/saml/acs` (HTTP-POST binding); it asks for signed assertions.',
        params: z.object({ ssoConnectionId: z.string().min(1).max(100) }),
        produces: ['application/samlmetadata+xml'],
        response: {
          200: z.string().describe('SAML 2.0 metadata (an EntityDescriptor with an SPSSODescriptor)'),
          404: errorResponse([ssoErrors.sso_connection_not_found], 'no SAML connection has this id'),
        },
      },
    },
    async (request, reply) => {
      const connection = await store.findSamlConnection(db, request.params.ssoConnectionId);
      if (!connection) throw ssoErrors.sso_connection_not_found('No SAML SSO connection has this id');
      return reply
        .header('content-type', 'application/samlmetadata+xml; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(saml.metadataXml(connection));
    },
  );

  await app.register(async (acsScope) => {
    // The IdP's form, and nothing else: any other body is read as empty and answered with the page below.
    acsScope.removeContentTypeParser('application/json');
    acsScope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: maxFormBytes },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    acsScope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxFormBytes }, (_request, _body, done) =>
      done(null, {}),
    );
    // A person's browser is here: what goes wrong before the handler is a page too, never JSON.
    acsScope.setErrorHandler((error: FastifyError, _request, reply) => {
      const status = error.statusCode ?? 500;
      if (status < 400 || status >= 500) throw error;
      return reply
        .status(status)
        .headers(htmlPageHeaders)
        .send(refusedPage("The identity provider's answer could not be read. Start the sign-in again."));
    });

    acsScope.post(
      samlAcsPath,
      {
        // Read by the handler, not refused by validation: whatever arrives, the browser gets a page.
        attachValidation: true,
        schema: {
          tags,
          operationId: 'ssoSamlAcs',
          ...publicAccess,
          summary: "Where the SAML identity provider posts the person's browser (assertion consumer service)",
          description:
            "Not for API clients. The HTTP-POST binding: the IdP's form with `SAMLResponse` and the `RelayState` orgplane sent. " +
            'On success, 303 to the redirect URI given at start with `?code=` (single use, valid ' +
            `${codeTtlSeconds}` +
            ' seconds). ' +
            "A browser that does not carry the `orgplane_sso` cookie of the one that opened the sign-in's link is refused first (403 page, `browser_mismatch`), " +
            'before the assertion is read or recorded, and the sign-in stays for its own browser. ' +
            "The assertion must be signed by one of the connection's IdP certificates, name this connection's SP entity id as its audience, " +
            "this URL as its bearer confirmation's Recipient and the response's Destination, answer the AuthnRequest of this sign-in " +
            '(`InResponseTo`), be within its NotBefore/NotOnOrAfter (give or take SSO_CLOCK_SKEW_SECONDS), and not have been used before. ' +
            "The e-mail comes from an `email`/`mail` attribute or an emailAddress NameID, and must be in the organization's verified domain; the NameID is the subject linked to the account. " +
            'A refused sign-in (expired or reused RelayState, a rejected or replayed assertion, an e-mail outside the domain, a suspended member, ' +
            'someone unknown while just-in-time provisioning is off) is a readable HTML page with status 400 or 403. ' +
            accountLinkingRule,
          consumes: ['application/x-www-form-urlencoded'],
          body: z.object({
            SAMLResponse: z.string().describe("The IdP's Response, base64"),
            RelayState: z.string().describe('As orgplane sent it with the AuthnRequest'),
          }),
          produces: ['text/html'],
          response: {
            303: z.null().describe('To the redirect URI with the one-time code'),
            400: z
              .string()
              .describe('HTML page: the sign-in expired or was already used, or the answer could not be read'),
            403: z
              .string()
              .describe(
                'HTML page: the sign-in was refused, and why (among others: `account_not_linkable`, an account with the e-mail exists that the organization has no tie to; `browser_mismatch`, another browser than the one that started it)',
              ),
            409: z.string().describe('HTML page: the identity is linked to another account'),
          },
        },
      },
      async (request, reply) => {
        const form = (request.body ?? {}) as Record<string, unknown>;
        const field = (value: unknown) =>
          typeof value === 'string' && value.length <= maxFormBytes ? value : undefined;
        try {
          const location = await acs.receive(
            {
              requestId: request.id,
              clientAddress: request.ip,
              userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
            },
            { SAMLResponse: field(form.SAMLResponse), RelayState: field(form.RelayState) },
            bindingSecretOf(
              typeof request.headers.cookie === 'string' ? request.headers.cookie : undefined,
              ssoBrowserCookie,
            ),
          );
          return reply
            .status(303)
            .header('location', location)
            .header('cache-control', 'no-store')
            .header('referrer-policy', 'no-referrer')
            .send(null);
        } catch (error) {
          if (!(error instanceof SignInRefused)) throw error;
          return reply
            .status(error.status as 400 | 403 | 409)
            .headers(htmlPageHeaders)
            .send(refusedPage(error.message));
        }
      },
    );
  });
};
