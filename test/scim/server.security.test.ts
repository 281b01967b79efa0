// The SCIM server: the token is required everywhere, rotated tokens stop at once, the owner is
// protected, and an identity provider only speaks for its own verified domain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';
import { membershipOf } from '../support/identity.ts';
import {
  memberOf,
  patchOp,
  rotateScimToken,
  scim,
  startScimEnv,
  userBody,
  verifySso,
  type ScimEnv,
} from './helpers.ts';

let env: ScimEnv;
let token: string;
before(async () => {
  env = await startScimEnv({ domain: 'example.test' });
  token = await rotateScimToken(env.app, env.tenant.owner.token);
});
after(async () => {
  await env.close();
});

test('no token, a session token or an API-style header: 401 on every endpoint, discovery and unknown paths included', async () => {
  const anonymous = scim(env.app, undefined);
  const asSession = scim(env.app, env.tenant.owner.token);
  for (const client of [anonymous, asSession]) {
    for (const response of [
      await client.get('/ServiceProviderConfig'),
      await client.get('/Schemas'),
      await client.get('/Users'),
      await client.post('/Users', userBody('x@example.test')),
      await client.get('/Groups'),
      await client.get('/Unknown'),
      await client.get('/Me'),
    ]) {
      assert.equal(response.status, 401);
      assert.equal(response.body.status, '401');
    }
  }
  const basic = await api(env.app.url).get('/scim/v2/Users', {
    headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
  });
  assert.equal(basic.status, 401);
  // nothing was provisioned by the refused requests
  const { rows } = await env.app.db.query('SELECT count(*)::int AS n FROM scim_users');
  assert.equal(rows[0].n, 0);
});

test('a rotated token is refused at once, mid-sequence', async () => {
  const old = token;
  const created = await scim(env.app, old).post('/Users', userBody('rot@example.test'));
  assert.equal(created.status, 201);
  token = await rotateScimToken(env.app, env.tenant.admin.token);
  const refused = await scim(env.app, old).patch(
    `/Users/${created.body.id}`,
    patchOp({ op: 'replace', value: { active: false } }),
  );
  assert.equal(refused.status, 401);
  assert.equal(
    (await memberOf(env.app, env.tenant.orgId, 'rot@example.test'))?.status,
    'active',
    'the refused request changed nothing',
  );
  assert.equal((await scim(env.app, token).get(`/Users/${created.body.id}`)).status, 200);
});

test('the owner cannot be suspended or removed through SCIM', async () => {
  const client = scim(env.app, token);
  const owner = await client.post('/Users', userBody(env.tenant.owner.email));
  assert.equal(owner.status, 201, owner.text);
  const suspend = await client.patch(`/Users/${owner.body.id}`, patchOp({ op: 'replace', value: { active: false } }));
  assert.equal(suspend.status, 400);
  assert.equal(suspend.body.scimType, 'mutability');
  const remove = await client.delete(`/Users/${owner.body.id}`);
  assert.equal(remove.status, 400);
  const member = await memberOf(env.app, env.tenant.orgId, env.tenant.owner.email);
  assert.deepEqual([member?.role, member?.status], ['owner', 'active']);
  assert.equal(
    (await api(env.app.url, env.tenant.owner.token).get('/v1/org')).status,
    200,
    'the owner keeps their session',
  );
});

test('e-mail addresses outside the verified domain are refused (the IdP only speaks for its domain)', async () => {
  const client = scim(env.app, token);
  for (const body of [
    userBody('someone@gmail.example'),
    userBody('ann', { emails: [{ value: 'ann@evil-example.test', primary: true }] }),
    userBody('x@notexample.test'),
  ]) {
    const response = await client.post('/Users', body);
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.scimType, 'invalidValue');
  }
  // a subdomain is fine
  assert.equal((await client.post('/Users', userBody('eng@corp.example.test'))).status, 201);
  // and an existing user cannot be moved out of the domain by a PATCH
  const u = await client.post('/Users', userBody('stay@example.test'));
  const moved = await client.patch(
    `/Users/${u.body.id}`,
    patchOp(
      { op: 'replace', path: 'emails', value: [{ value: 'stay@elsewhere.example', primary: true }] },
      { op: 'replace', path: 'userName', value: 'stay@elsewhere.example' },
    ),
  );
  assert.equal(moved.status, 400);
});

test('deleting a provisioned user removes the member and revokes their sessions', async () => {
  const client = scim(env.app, token);
  const { admin } = env.tenant;
  const linked = await client.post('/Users', userBody(admin.email));
  assert.equal(linked.status, 201);
  assert.equal((await memberOf(env.app, env.tenant.orgId, admin.email))?.role, 'admin', 'an existing role is kept');
  assert.equal((await client.delete(`/Users/${linked.body.id}`)).status, 204);
  assert.equal(await memberOf(env.app, env.tenant.orgId, admin.email), undefined);
  assert.equal((await api(env.app.url, admin.token).get('/v1/org')).status, 401);
});

test('a person who left the organization and rejoined is still suspended and removed through SCIM', async () => {
  const client = scim(env.app, token);
  const { owner, orgId } = env.tenant;
  // Provisioned while a member, then removed and invited back: the SCIM user's link to the first membership is gone.
  const rejoin = async (label: string) => {
    const person = await signUp(env.app.url, label);
    await addMember(env.app.url, owner, orgId, person, 'member');
    const created = await client.post('/Users', userBody(person.email));
    assert.equal(created.status, 201, created.text);
    assert.equal(
      (await api(env.app.url, owner.token).delete(`/v1/orgs/${orgId}/members/${person.memberId}`)).status,
      204,
    );
    await addMember(env.app.url, owner, orgId, person, 'member');
    assert.equal((await api(env.app.url, person.token).get('/v1/org')).status, 200);
    return { person, path: `/Users/${created.body.id}` };
  };

  const patched = await rejoin('rejoiner');
  const off = await client.patch(patched.path, patchOp({ op: 'replace', value: { active: false } }));
  assert.equal(off.status, 200, off.text);
  assert.equal((await memberOf(env.app, orgId, patched.person.email))?.status, 'suspended');
  assert.equal((await api(env.app.url, patched.person.token).get('/v1/org')).status, 401, 'their session was revoked');
  const signIn = await api(env.app.url).post('/v1/auth/sign-in', {
    email: patched.person.email,
    password: patched.person.password,
  });
  assert.equal(
    (await api(env.app.url, signIn.body.sessionToken).post(`/v1/orgs/${orgId}/install-links`, {})).status,
    404,
  );

  const put = await rejoin('putter');
  const replaced = await client.put(put.path, userBody(put.person.email, { active: false }));
  assert.equal(replaced.status, 200, replaced.text);
  assert.equal((await memberOf(env.app, orgId, put.person.email))?.status, 'suspended');
  assert.equal((await api(env.app.url, put.person.token).get('/v1/org')).status, 401);

  const deleted = await rejoin('leaver');
  assert.equal((await client.delete(deleted.path)).status, 204);
  assert.equal(await memberOf(env.app, orgId, deleted.person.email), undefined);
  assert.equal((await api(env.app.url, deleted.person.token).get('/v1/org')).status, 401);
});

test('a filter cannot inject SQL', async () => {
  const client = scim(env.app, token);
  const evil = `userName eq "x' OR '1'='1" or displayName co "'; DROP TABLE scim_users; --"`;
  const response = await client.get(`/Users?filter=${encodeURIComponent(evil)}`);
  assert.equal(response.status, 200);
  assert.equal(response.body.totalResults, 0);
  assert.ok((await client.get('/Users')).body.totalResults > 0);
});

test('deactivation works whatever the SSO domain: unverified or changed, active false suspends and revokes sessions; activation still needs the domain', async () => {
  // Its own organization: the domain changes here.
  const own = await startScimEnv({ domain: 'example.test' });
  try {
    const { app, tenant } = own;
    const client = scim(app, await rotateScimToken(app, tenant.owner.token));
    const provision = async (email: string) => {
      const created = await client.post('/Users', userBody(email));
      assert.equal(created.status, 201, created.text);
      return `/Users/${created.body.id}`;
    };
    const memberPath = await provision(tenant.member.email);
    const adminPath = await provision(tenant.admin.email);
    const ownerPath = await provision(tenant.owner.email);

    // The connection names another domain, not verified yet.
    const changed = await api(app.url, tenant.owner.token).put('/v1/sso/connection', {
      domain: 'elsewhere.example',
      issuer: 'https://idp.example.test',
      clientId: 'c',
    });
    assert.equal(changed.status, 200, changed.text);
    const off = await client.patch(memberPath, patchOp({ op: 'replace', path: 'active', value: false }));
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.active, false);
    assert.equal((await memberOf(app, tenant.orgId, tenant.member.email))?.status, 'suspended');
    assert.equal((await api(app.url, tenant.member.token).get('/v1/org')).status, 401, 'their session was revoked');
    assert.equal(
      (await client.patch(memberPath, patchOp({ op: 'replace', path: 'active', value: true }))).status,
      403,
      'giving access back waits for the domain',
    );
    assert.equal((await memberOf(app, tenant.orgId, tenant.member.email))?.status, 'suspended');
    const owner = await client.patch(ownerPath, patchOp({ op: 'replace', value: { active: false } }));
    assert.deepEqual([owner.status, owner.body.scimType], [400, 'mutability'], 'the owner stays protected');

    // The other domain is verified: the admin's address is outside it, and a PUT still deactivates them.
    await verifySso(app, own.dns, tenant.orgId, tenant.owner.token, 'elsewhere.example');
    const put = await client.put(adminPath, userBody(tenant.admin.email, { active: false }));
    assert.equal(put.status, 200, put.text);
    assert.equal((await memberOf(app, tenant.orgId, tenant.admin.email))?.status, 'suspended');
    assert.equal((await api(app.url, tenant.admin.token).get('/v1/org')).status, 401, 'their session was revoked');
    const back = await client.put(adminPath, userBody(tenant.admin.email, { active: true }));
    assert.deepEqual(
      [back.status, back.body.scimType],
      [400, 'invalidValue'],
      'an address outside the domain cannot be made active',
    );
    assert.equal((await memberOf(app, tenant.orgId, tenant.admin.email))?.status, 'suspended');
  } finally {
    await own.close();
  }
});

test('an account someone made by sign-up with an address of the domain is not provisioned into the organization; once invited, it is', async () => {
  const client = scim(env.app, token);
  // An outsider signs up first with the address of a future hire (sign-up does not prove ownership).
  const squatter = await signUp(env.app.url, 'newhire');
  const refused = await client.post('/Users', userBody(squatter.email));
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.body.scimType, 'uniqueness');
  assert.equal(await memberOf(env.app, env.tenant.orgId, squatter.email), undefined, 'no membership was made');
  assert.equal(
    (
      await api(env.app.url, squatter.token).put('/v1/session/active-organization', {
        organizationId: env.tenant.orgId,
      })
    ).status,
    404,
  );
  const listed = await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${squatter.email}"`)}`);
  assert.equal(listed.body.totalResults, 0, 'and no SCIM user');

  // The organization invites the person (who accepts, signed in): then the directory may manage them.
  await addMember(env.app.url, env.tenant.owner, env.tenant.orgId, squatter, 'member');
  const linked = await client.post('/Users', userBody(squatter.email));
  assert.equal(linked.status, 201, linked.text);
  assert.equal((await memberOf(env.app, env.tenant.orgId, squatter.email))?.status, 'active');
});

test('a user deleted through SCIM cannot come back with an invitation sent to them before the removal', async () => {
  const client = scim(env.app, token);
  const person = await signUp(env.app.url, 'invitee');
  const invitation = await api(env.app.url, env.tenant.owner.token).post(`/v1/orgs/${env.tenant.orgId}/invitations`, {
    email: person.email,
    role: 'admin',
  });
  assert.equal(invitation.status, 201, invitation.text);
  // The person becomes a member without accepting it (as provisioning makes members), and the directory then manages them.
  await membershipOf(env.app).ensureMember(env.app.db, env.tenant.orgId, person.userId, 'member');
  const linked = await client.post('/Users', userBody(person.email));
  assert.equal(linked.status, 201, linked.text);
  assert.equal((await client.delete(`/Users/${linked.body.id}`)).status, 204);

  const signedIn = await api(env.app.url).post('/v1/auth/sign-in', { email: person.email, password: person.password });
  const accepted = await api(env.app.url, signedIn.body.sessionToken).post(
    `/v1/invitations/${invitation.body.token}/accept`,
  );
  assert.equal(accepted.status, 404, accepted.text);
  assert.equal(await memberOf(env.app, env.tenant.orgId, person.email), undefined);
});

// Transfers of ownership racing SCIM's deactivations and deletions of the new owner. Each test has an
// organization of its own, whose owner changes.
const raceOptions = { skip: testBackend !== 'postgres' && 'PGlite has one connection: no concurrent transactions' };

/** Its members have sessions (each in turn may become the owner) and are linked to SCIM users. */
async function ownershipRaces(own: ScimEnv) {
  const { app, tenant } = own;
  const client = scim(app, await rotateScimToken(app, tenant.owner.token));
  return {
    async newMember(owner: TestUser, label: string) {
      const person = await signUp(app.url, label);
      await addMember(app.url, owner, tenant.orgId, person, 'member');
      const created = await client.post('/Users', userBody(person.email));
      assert.equal(created.status, 201, created.text);
      return { person, path: `/Users/${created.body.id}` };
    },
    transfer: (owner: TestUser, to: TestUser) =>
      api(app.url, owner.token).post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, { memberId: to.memberId }),
    scimWrite: (action: 'deactivate' | 'delete', path: string) =>
      action === 'delete'
        ? client.delete(path)
        : client.patch(path, patchOp({ op: 'replace', path: 'active', value: false })),
    async owners() {
      const { rows } = await app.db.query(
        "SELECT id, status FROM members WHERE organization_id = $1 AND role = 'owner'",
        [tenant.orgId],
      );
      return rows;
    },
  };
}

test(
  'ownership transferred to a member while SCIM suspends or deletes them: whichever goes first, the other sees it, and one active owner remains',
  raceOptions,
  async () => {
    const own = await startScimEnv({ domain: 'example.test' });
    try {
      const race = await ownershipRaces(own);
      let owner = own.tenant.owner;
      for (const first of ['transfer', 'scim'] as const) {
        for (const action of ['deactivate', 'delete'] as const) {
          const label = `${first} first, ${action}`;
          const { person, path } = await race.newMember(owner, `heir-${first}-${action}`);
          // The member's row held: the first request waits on it, the second behind the first; released, they go on at once.
          const lock = await holdLocks(own.app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [person.memberId]);
          const start = (which: 'transfer' | 'scim') =>
            which === 'transfer' ? race.transfer(owner, person) : race.scimWrite(action, path);
          const firstRequest = start(first);
          await lock.waitForBlocked(1);
          const secondRequest = start(first === 'transfer' ? 'scim' : 'transfer');
          await lock.waitForBlocked(2);
          await lock.release();
          const [transferred, written] =
            first === 'transfer'
              ? [await firstRequest, await secondRequest]
              : [await secondRequest, await firstRequest];
          if (first === 'transfer') {
            // SCIM sees the new owner, protected like any owner.
            assert.equal(transferred.status, 200, `${label}: ${transferred.text}`);
            assert.deepEqual([written.status, written.body.scimType], [400, 'mutability'], `${label}: ${written.text}`);
            owner = person;
          } else {
            // The transfer sees the member suspended or gone.
            assert.equal(written.status, action === 'delete' ? 204 : 200, `${label}: ${written.text}`);
            assert.deepEqual(
              [transferred.status, transferred.body.error],
              [404, 'member_not_found'],
              `${label}: ${transferred.text}`,
            );
          }
          assert.deepEqual(await race.owners(), [{ id: owner.memberId, status: 'active' }], label);
        }
      }
    } finally {
      await own.close();
    }
  },
);

test('transfers of ownership fired together with SCIM suspending or deleting the new owner: never a 5xx, one active owner each time', async () => {
  const own = await startScimEnv({ domain: 'example.test' });
  try {
    const race = await ownershipRaces(own);
    let owner = own.tenant.owner;
    for (let round = 0; round < 15; round++) {
      const action = round % 2 === 0 ? 'deactivate' : 'delete';
      const { person, path } = await race.newMember(owner, `heir-${round}`);
      const [transferred, written] = await Promise.all([race.transfer(owner, person), race.scimWrite(action, path)]);
      const outcome = `round ${round} (${action}): transfer ${transferred.status} ${transferred.text}, SCIM ${written.status} ${written.text}`;
      // One of them first, the other seeing it: never both.
      const transferFirst =
        transferred.status === 200 && written.status === 400 && written.body.scimType === 'mutability';
      const scimFirst =
        written.status === (action === 'delete' ? 204 : 200) &&
        transferred.status === 404 &&
        transferred.body.error === 'member_not_found';
      assert.ok(transferFirst || scimFirst, outcome);
      if (transferFirst) owner = person;
      assert.deepEqual(await race.owners(), [{ id: owner.memberId, status: 'active' }], outcome);
    }
  } finally {
    await own.close();
  }
});
