// What the account-linking tests share: turning just-in-time provisioning on for an OIDC or SAML world,
// an account someone signs up for with another person's e-mail before that person ever signs in through
// SSO, and what a session of that account can reach of the organization.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import type { OidcWorld } from './oidc-support.ts';
import type { SamlWorld } from './saml-support.ts';

export const freshEmail = (label: string) => `${label}.${randomBytes(4).toString('hex')}@example.test`;

export async function enableJit(world: OidcWorld | SamlWorld): Promise<void> {
  const owner = api(world.app.url, world.tenant.owner.token);
  const current = (await owner.get('/v1/sso/connection')).body.connection;
  const body =
    current.protocol === 'saml'
      ? {
          domain: current.domain,
          protocol: 'saml',
          idpMetadataXml: (world as SamlWorld).idp.metadataXml,
          jitProvisioning: { enabled: true },
        }
      : {
          domain: current.domain,
          issuer: current.issuer,
          clientId: current.clientId,
          jitProvisioning: { enabled: true },
        };
  const put = await owner.put('/v1/sso/connection', body);
  assert.equal(put.status, 200, put.text);
}

export interface Squatter {
  email: string;
  password: string;
  userId: string;
  /** The session sign-up gave them. */
  token: string;
}

/** Someone signs up with `email` (a password account nobody verified) before its owner ever signs in through SSO. */
export async function signUpAs(app: TestApp, email: string): Promise<Squatter> {
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const signedUp = await api(app.url).post('/v1/auth/sign-up', { email, password, name: 'Not The Person' });
  assert.equal(signedUp.status, 201, signedUp.text);
  return { email, password, userId: signedUp.body.user.id, token: signedUp.body.sessionToken };
}

/** The organization's member list as `token` sees it: the status (404 for someone who is not a member). */
export async function membersStatus(app: TestApp, token: string, orgId: string): Promise<number> {
  return (await api(app.url, token).get(`/v1/orgs/${orgId}/members`)).status;
}

/** Rows that would show a link or a membership of the account in the organization. */
export async function traces(app: TestApp, orgId: string, userId: string) {
  const members = (
    await app.db.query('/* test */ SELECT id FROM members WHERE organization_id = $1 AND user_id = $2', [orgId, userId])
  ).rows.length;
  const links = (
    await app.db.query('/* test */ SELECT subject FROM sso_identities WHERE organization_id = $1 AND user_id = $2', [
      orgId,
      userId,
    ])
  ).rows.length;
  return { members, links };
}

/** The account's sessions that are still valid. */
export async function liveSessions(app: TestApp, userId: string): Promise<number> {
  const { rows } = await app.db.query(
    '/* test */ SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()',
    [userId],
  );
  return rows.length;
}
