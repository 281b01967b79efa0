// SAML's assertion consumer service: the sign-in the RelayState names (its browser checked, then taken
// once), the IdP's answer refused unread when its shape would keep the parser busy (saml-xml-shape.ts),
// then checked (saml.ts), the assertion recorded as used, and then the same completion as OIDC's
// (sign-in.ts: the e-mail in the verified domain, the account or just-in-time provisioning, the NameID
// linked as the subject, the one-time code for the caller's redirect URI).
import type { Database } from '../../db/database.ts';
import type { WriteContext } from '../../platform/write-context.ts';
import { SamlRejected, type SamlIdentity, type SamlServiceProvider } from './saml.ts';
import { samlXmlShapeProblem } from './saml-xml-shape.ts';
import type { SignInService } from './sign-in.ts';
import { SignInRefused } from './sign-in-refusals.ts';
import { createSignInStore } from './sign-in-store.ts';

export interface SamlAcsDeps {
  db: Database;
  saml: Pick<SamlServiceProvider, 'pendingRequest' | 'takeRequest' | 'validate' | 'recordAssertion'>;
  signIn: Pick<SignInService, 'complete' | 'recordFailure' | 'refuseOtherBrowser'>;
}

export function createSamlAcs(deps: SamlAcsDeps) {
  const store = createSignInStore();
  return {
    /**
     * Where to send the browser (the redirect URI with a one-time code); refusals throw SignInRefused.
     * `carried`: the binding secret the posting browser carries (sign-in.ts, ssoBrowserCookie).
     */
    async receive(
      context: Omit<WriteContext, 'actor'>,
      form: { SAMLResponse?: string | undefined; RelayState?: string | undefined },
      carried: string | null,
    ): Promise<string> {
      const unknown = () =>
        new SignInRefused(
          400,
          'unknown_state',
          'This sign-in has expired or was already used. Start the sign-in again.',
        );
      const pending = form.RelayState ? await deps.saml.pendingRequest(form.RelayState) : undefined;
      if (!pending) throw unknown();
      // The browser before the sign-in is taken or the assertion read: another browser's refusal leaves it to its own.
      await deps.signIn.refuseOtherBrowser(context, pending, carried);
      const request = await deps.saml.takeRequest(form.RelayState!);
      if (!request) throw unknown();
      const connection = await store.findById(deps.db, request.organization_id, request.connection_id);
      if (connection?.protocol !== 'saml')
        throw new SignInRefused(
          400,
          'unknown_state',
          'The SSO connection changed during the sign-in. Start the sign-in again.',
        );
      const fail = async (category: string, message: string, status = 403): Promise<never> => {
        await deps.signIn.recordFailure(context, connection, category, message);
        throw new SignInRefused(status, category, message);
      };
      if (!form.SAMLResponse) return fail('assertion_rejected', 'The identity provider sent no SAMLResponse.', 400);
      // Judged on the text, before any parser: see saml-xml-shape.ts.
      const shapeProblem = samlXmlShapeProblem(Buffer.from(form.SAMLResponse, 'base64').toString('utf8'));
      if (shapeProblem) return fail('assertion_rejected', shapeProblem, 400);
      let identity: SamlIdentity;
      try {
        identity = await deps.saml.validate(connection, request, form.SAMLResponse);
      } catch (error) {
        if (error instanceof SamlRejected) return fail(error.category, error.message);
        throw error;
      }
      if (!(await deps.saml.recordAssertion(connection, identity))) {
        return fail(
          'assertion_replayed',
          'This assertion was used before; an assertion signs in once. Start the sign-in again.',
        );
      }
      if (!identity.email) {
        return fail(
          'email_missing',
          'The identity provider sent no e-mail address (an email attribute, or a NameID in the emailAddress format).',
        );
      }
      // A SAML IdP has no "verified" flag: the organization verified the domain and chose this IdP for it,
      // so the e-mail it asserts stands as verified; it must still be in that domain (checked by complete).
      return deps.signIn.complete(context, connection, request, {
        sub: identity.subject,
        email: identity.email,
        email_verified: true,
        ...(identity.name ? { name: identity.name } : {}),
      });
    },
  };
}

export type SamlAcs = ReturnType<typeof createSamlAcs>;
