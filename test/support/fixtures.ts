import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { api } from './http.ts';

export interface TestUser {
  token: string;
  userId: string;
  email: string;
  password: string;
  name: string;
  /** Member id in the tenant's organization (empty for outsiders). */
  memberId: string;
}

export interface Tenant {
  orgId: string;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  /** Signed in, member of no organization. */
  outsider: TestUser;
  /** Owner of another organization (admin rights there, none here). */
  otherAdmin: TestUser;
  otherOrgId: string;
}

export const uniqueEmail = (label: string) => `${label}.${randomBytes(5).toString('hex')}@example.test`;

export async function signUp(baseUrl: string, label: string): Promise<TestUser> {
  const email = uniqueEmail(label);
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const name = `${label[0]!.toUpperCase()}${label.slice(1)} Person`;
  const response = await api(baseUrl).post('/v1/auth/sign-up', { email, password, name });
  assert.equal(response.status, 201, response.text);
  return { token: response.body.sessionToken, userId: response.body.user.id, email, password, name, memberId: '' };
}

export async function createOrganization(baseUrl: string, user: TestUser, name: string): Promise<string> {
  const created = await api(baseUrl, user.token).post('/v1/orgs', { name });
  assert.equal(created.status, 201, created.text);
  const org = await api(baseUrl, user.token).get('/v1/org');
  assert.equal(org.status, 200, org.text);
  user.memberId = org.body.currentMember.id;
  return created.body.organization.id;
}

/** Invites `user` with `role`, accepts, and makes the organization their active one. */
export async function addMember(
  baseUrl: string,
  inviter: TestUser,
  orgId: string,
  user: TestUser,
  role: 'admin' | 'member',
): Promise<void> {
  const invitation = await api(baseUrl, inviter.token).post(`/v1/orgs/${orgId}/invitations`, {
    email: user.email,
    role,
  });
  assert.equal(invitation.status, 201, invitation.text);
  const accepted = await api(baseUrl, user.token).post(`/v1/invitations/${invitation.body.token}/accept`);
  assert.equal(accepted.status, 200, accepted.text);
  user.memberId = accepted.body.member.id;
  const active = await api(baseUrl, user.token).put('/v1/session/active-organization', { organizationId: orgId });
  assert.equal(active.status, 200, active.text);
}

/** An organization with an owner, an admin and a member, an outsider, and another organization's admin. */
export async function createTenant(baseUrl: string): Promise<Tenant> {
  const [owner, admin, member, outsider, otherAdmin] = await Promise.all(
    ['owner', 'admin', 'member', 'outsider', 'other'].map((label) => signUp(baseUrl, label)),
  );
  const [orgId, otherOrgId] = await Promise.all([
    createOrganization(baseUrl, owner!, 'Acme'),
    createOrganization(baseUrl, otherAdmin!, 'Globex'),
  ]);
  await addMember(baseUrl, owner!, orgId, admin!, 'admin');
  await addMember(baseUrl, owner!, orgId, member!, 'member');
  return {
    orgId,
    owner: owner!,
    admin: admin!,
    member: member!,
    outsider: outsider!,
    otherAdmin: otherAdmin!,
    otherOrgId,
  };
}
