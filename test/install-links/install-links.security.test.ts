// Install links: who may mint and rotate, and that a link only ever opens its own organization.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, testBackend } from '../support/app.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';

const t = useTenantApp();

const path = (orgId: string) => `/v1/orgs/${orgId}/install-links`;
const countLinks = async (orgId: string) =>
  Number(
    (await t.app.db.query('SELECT count(*)::int AS n FROM install_links WHERE organization_id = $1', [orgId])).rows[0]
      .n,
  );

test('anonymous and bogus sessions are 401 unauthorized', async () => {
  for (const token of [undefined, 'ops_forged', 'garbage']) {
    const response = await api(t.app.url, token).post(path(t.tenant.orgId), {});
    assert.equal(response.status, 401);
    assert.deepEqual(response.body, { error: 'unauthorized' });
  }
});

test('a member asking for rotation gets 403 forbidden, no link, and older links stay valid', async () => {
  const older = await api(t.app.url, t.tenant.admin.token).post(path(t.tenant.orgId), {});
  const before = await countLinks(t.tenant.orgId);
  const response = await api(t.app.url, t.tenant.member.token).post(path(t.tenant.orgId), { rotate: true });
  assert.equal(response.status, 403);
  assert.equal(response.body.error, 'forbidden');
  assert.equal(response.body.token, undefined);
  assert.equal(await countLinks(t.tenant.orgId), before);
  assert.equal((await api(t.app.url).get(`/v1/install-links/${older.body.token}`)).status, 200);
});

test('people outside the organization cannot mint or rotate its links', async () => {
  const older = await api(t.app.url, t.tenant.admin.token).post(path(t.tenant.orgId), {});
  const before = await countLinks(t.tenant.orgId);
  for (const user of [t.tenant.outsider, t.tenant.otherAdmin]) {
    for (const body of [{}, { rotate: true }]) {
      const response = await api(t.app.url, user.token).post(path(t.tenant.orgId), body);
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'organization_not_found');
    }
  }
  assert.equal(await countLinks(t.tenant.orgId), before);
  assert.equal((await api(t.app.url).get(`/v1/install-links/${older.body.token}`)).status, 200);
});

test('a suspended member cannot mint', async () => {
  const { rows } = await t.app.db.query('SELECT id FROM members WHERE organization_id = $1 AND user_id = $2', [
    t.tenant.orgId,
    t.tenant.member.userId,
  ]);
  await t.app.db.query("UPDATE members SET status = 'suspended' WHERE id = $1", [rows[0].id]);
  try {
    const response = await api(t.app.url, t.tenant.member.token).post(path(t.tenant.orgId), {});
    assert.equal(response.status, 404);
  } finally {
    await t.app.db.query("UPDATE members SET status = 'active' WHERE id = $1", [rows[0].id]);
  }
});

// A member removed after their request passed the membership check, before its link is written:
// they get what a non-member gets (it was a 500: the foreign key of created_by_member_id refused the
// link), and nothing is written, a rotation's revocations included.
describe('a member removed while minting', () => {
  before(async () => {
    // The moment without timing: counting the mint of a member whose e-mail starts with "doomed"
    // (after the membership check, before the write) removes that member, committed with the count.
    await t.app.db.query(`
      CREATE FUNCTION test_remove_doomed_minter() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM members m USING users u
         WHERE u.id = m.user_id AND u.email LIKE 'doomed%' AND NEW.bucket = 'install-links:create:' || m.id;
        RETURN NULL;
      END $$`);
    await t.app.db.query(`CREATE TRIGGER test_remove_doomed_minter AFTER INSERT OR UPDATE ON rate_limit_counters
      FOR EACH ROW EXECUTE FUNCTION test_remove_doomed_minter()`);
  });

  const newMember = async (label: string, role: 'admin' | 'member') => {
    const user = await signUp(t.app.url, label);
    await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, user, role);
    return user;
  };
  const isMember = async (memberId: string) =>
    (await t.app.db.query('SELECT 1 FROM members WHERE id = $1', [memberId])).rows.length > 0;

  /** The same request again, now that the removal is committed: what a non-member gets. */
  async function assertAnsweredAsNonMember(
    user: TestUser,
    body: object,
    response: { status: number; body: any; text: string },
  ) {
    const again = await api(t.app.url, user.token).post(path(t.tenant.orgId), body);
    assert.equal(again.status, 404, again.text);
    assert.equal(response.status, again.status, response.text);
    assert.deepEqual(response.body, again.body);
  }

  for (const [role, body] of [
    ['member', {}],
    ['admin', { rotate: true }],
  ] as const) {
    test(`removed after the check: a ${role}'s ${'rotate' in body ? 'rotation' : 'mint'} is 404 organization_not_found, nothing written`, async () => {
      const older = await api(t.app.url, t.tenant.owner.token).post(path(t.tenant.orgId), {});
      assert.equal(older.status, 201, older.text);
      const doomed = await newMember(`doomed-${role}`, role);
      const before = await countLinks(t.tenant.orgId);
      const response = await api(t.app.url, doomed.token).post(path(t.tenant.orgId), body);
      assert.equal(await isMember(doomed.memberId), false, 'the removal happened');
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'organization_not_found');
      assert.equal(response.body.token, undefined);
      assert.equal(await countLinks(t.tenant.orgId), before, 'no link written');
      assert.equal(
        (await api(t.app.url).get(`/v1/install-links/${older.body.token}`)).status,
        200,
        'older links stay valid',
      );
      await assertAnsweredAsNonMember(doomed, body, response);
    });
  }

  test('removal in progress as the link is written: the write waits for it, then 404 organization_not_found', {
    skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
  }, async () => {
    const held = await newMember('held-member', 'member');
    const before = await countLinks(t.tenant.orgId);
    // The removal, uncommitted: the request passes the membership check, then its write waits for the member row.
    const removing = await holdLocks(t.app, 'DELETE FROM members WHERE id = $1', [held.memberId]);
    const minting = api(t.app.url, held.token).post(path(t.tenant.orgId), {});
    await removing.waitForBlocked(1);
    await removing.release();
    const response = await minting;
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'organization_not_found');
    assert.equal(await countLinks(t.tenant.orgId), before, 'no link written');
    await assertAnsweredAsNonMember(held, {}, response);
  });

  test('suspension in progress as the link is written: the write waits for it, then 404, nothing written', {
    skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
  }, async () => {
    // No foreign key notices a suspension: only the lock taken with the write does.
    const held = await newMember('held-suspended', 'member');
    const before = await countLinks(t.tenant.orgId);
    const suspending = await holdLocks(t.app, "UPDATE members SET status = 'suspended' WHERE id = $1", [held.memberId]);
    const minting = api(t.app.url, held.token).post(path(t.tenant.orgId), {});
    await suspending.waitForBlocked(1);
    await suspending.release();
    const response = await minting;
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'organization_not_found');
    assert.equal(await countLinks(t.tenant.orgId), before, 'no link written');
  });
});

test('tokens of one organization never open another, and rotation in one leaves the other alone', async () => {
  const ours = await api(t.app.url, t.tenant.admin.token).post(path(t.tenant.orgId), {});
  const theirs = await api(t.app.url, t.tenant.otherAdmin.token).post(path(t.tenant.otherOrgId), {});
  assert.equal((await api(t.app.url).get(`/v1/install-links/${ours.body.token}`)).body.organization.id, t.tenant.orgId);
  assert.equal(
    (await api(t.app.url).get(`/v1/install-links/${theirs.body.token}`)).body.organization.id,
    t.tenant.otherOrgId,
  );
  // Another organization's admin rotating their links does not touch ours.
  assert.equal(
    (await api(t.app.url, t.tenant.otherAdmin.token).post(path(t.tenant.otherOrgId), { rotate: true })).status,
    201,
  );
  assert.equal((await api(t.app.url).get(`/v1/install-links/${ours.body.token}`)).status, 200);
  assert.equal((await api(t.app.url).get(`/v1/install-links/${theirs.body.token}`)).status, 404);
});

test('concurrent rotations leave exactly one valid link', async () => {
  const results = await Promise.all(
    Array.from({ length: 4 }, (_, i) =>
      api(t.app.url, i % 2 ? t.tenant.owner.token : t.tenant.admin.token).post(path(t.tenant.orgId), { rotate: true }),
    ),
  );
  for (const r of results) assert.equal(r.status, 201, r.text);
  const valid = [];
  for (const r of results)
    if ((await api(t.app.url).get(`/v1/install-links/${r.body.token}`)).status === 200) valid.push(r);
  assert.equal(valid.length, 1);
  const { rows } = await t.app.db.query(
    'SELECT count(*)::int AS n FROM install_links WHERE organization_id = $1 AND revoked_at IS NULL',
    [t.tenant.orgId],
  );
  assert.equal(rows[0].n, 1);
});

test('the token never appears in the logs', async () => {
  const { body } = await api(t.app.url, t.tenant.owner.token).post(path(t.tenant.orgId), {});
  await api(t.app.url).get(`/v1/install-links/${body.token}`);
  await api(t.app.url).get(`/install/${body.token}`);
  const secret = body.token.slice(4);
  assert.ok(!t.app.logText().includes(secret), 'install link token found in logs');
});

test('a token reached through a percent-encoded path or query name is not logged either', async () => {
  const created = await api(t.app.url, t.tenant.member.token).post(path(t.tenant.orgId), {});
  assert.equal(created.status, 201, created.text);
  const token: string = created.body.token;
  // The router decodes these before it matches, so each reaches its route with the token.
  const opened = [
    await api(t.app.url).get(`/v1/install-link%73/${token}`),
    await api(t.app.url).get(`/%69nstall/${token}`),
  ];
  for (const response of opened) assert.equal(response.status, 200, response.text);
  const invitation = await api(t.app.url, t.tenant.owner.token).post(`/v1/orgs/${t.tenant.orgId}/invitations`, {
    email: 'encoded.path@example.test',
    role: 'member',
  });
  assert.equal(invitation.status, 201, invitation.text);
  await api(t.app.url, t.tenant.outsider.token).post(`/v1/%69nvitations/${invitation.body.token}/accept`, {});
  const code = 'oauth-code-reached-by-an-encoded-name';
  await api(t.app.url).get(`/v1/mcp-connections/oauth/callback?%63ode=${code}&st%61te=x`);
  const logs = t.app.logText();
  assert.ok(logs.includes('install-link'), 'the requests were logged');
  for (const secret of [token, invitation.body.token, code])
    assert.ok(!logs.includes(secret), `${secret.slice(0, 8)}… is in the log`);
});

test('per-client lookup limits: X-Forwarded-For names the client only when it comes from a trusted proxy', async () => {
  const minted = await api(t.app.url, t.tenant.member.token).post(path(t.tenant.orgId), {});
  assert.equal(minted.status, 201, minted.text);
  const lookup = (base: string, client: string) =>
    api(base).get(`/v1/install-links/${minted.body.token}`, { headers: { 'x-forwarded-for': client } });
  // Remaining lookups of the bucket each answer counts against: one bucket per client, or one for all.
  const remainingAfter = async (base: string) => {
    const answers = [
      await lookup(base, '203.0.113.1'),
      await lookup(base, '203.0.113.1'),
      await lookup(base, '203.0.113.2'),
    ];
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    return answers.map((answer) => Number(answer.headers.get('ratelimit-remaining')));
  };
  // Here the connection comes from 127.0.0.1 itself: an address nobody named, whose header is not believed.
  const [a1, a2, b] = await remainingAfter(t.app.url);
  assert.deepEqual([a2, b], [a1! - 1, a1! - 2], 'a forged X-Forwarded-For does not buy a fresh bucket');

  const behindProxy = await startTestApp({ trustedProxies: ['127.0.0.1/32'] }, { shareDatabaseWith: t.app });
  try {
    const [c1, c2, d] = await remainingAfter(behindProxy.url);
    assert.equal(c2, c1! - 1);
    assert.equal(d, c1, 'another client behind the proxy has a bucket of its own');
  } finally {
    await behindProxy.close();
  }
});
