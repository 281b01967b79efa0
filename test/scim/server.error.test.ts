// The SCIM server's errors: SCIM error bodies (status as a string, scimType) for every failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { holdLocks } from '../support/held-locks.ts';
import { memberOf, patchOp, rotateScimToken, scim, startScimEnv, userBody, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
let token: string;
let client: ReturnType<typeof scim>;
before(async () => {
  env = await startScimEnv({ domain: 'acme.example' });
  token = await rotateScimToken(env.app, env.tenant.owner.token);
  client = scim(env.app, token);
});
after(async () => {
  await env.close();
});

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
function assertScimError(response: { status: number; body: any; headers: Headers }, status: number, scimType?: string) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(response.body.schemas, [ERROR]);
  assert.equal(response.body.status, String(status));
  assert.equal(response.body.scimType, scimType);
  assert.equal(typeof response.body.detail, 'string');
  assert.match(response.headers.get('content-type')!, /^application\/scim\+json/);
}

test('duplicate userName (case-insensitive): 409 uniqueness', async () => {
  assert.equal((await client.post('/Users', userBody('ann@acme.example'))).status, 201);
  assertScimError(await client.post('/Users', userBody('ANN@acme.example')), 409, 'uniqueness');
  const other = await client.post('/Users', userBody('bob@acme.example'));
  // renaming onto a taken userName is a conflict too
  assertScimError(
    await client.patch(
      `/Users/${other.body.id}`,
      patchOp({ op: 'replace', path: 'userName', value: 'Ann@Acme.example' }),
    ),
    409,
    'uniqueness',
  );
  assertScimError(await client.put(`/Users/${other.body.id}`, userBody('ann@acme.example')), 409, 'uniqueness');
});

test('unknown resources: 404', async () => {
  for (const response of [
    await client.get('/Users/scimu_01jqz3v6b8e9f0g1h2j3k4m5n6'),
    await client.put('/Users/nope', userBody('x@acme.example')),
    await client.delete('/Users/nope'),
    await client.get('/Groups/nope'),
    await client.patch('/Groups/nope', patchOp({ op: 'add', path: 'members', value: [] })),
    await client.delete('/Groups/nope'),
    await client.get('/Schemas/urn:example:nope'),
    await client.get('/ResourceTypes/Device'),
    await client.get('/Devices'),
  ]) {
    assertScimError(response, 404);
  }
});

test('bad filters: 400 invalidFilter', async () => {
  for (const filter of [
    'userName eq',
    'userName like "a"',
    'nickName eq "a"',
    'userName gt "a"',
    'active eq "yes"',
    '(userName eq "a"',
    'emails[foo eq "x"]',
  ]) {
    assertScimError(await client.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
  }
  assertScimError(await client.get(`/Groups?filter=${encodeURIComponent('owner eq "x"')}`), 400, 'invalidFilter');
});

test('bad paging values: 400 invalidValue', async () => {
  assertScimError(await client.get('/Users?count=ten'), 400, 'invalidValue');
  assertScimError(await client.get('/Users?startIndex=1.5'), 400, 'invalidValue');
});

test('bad bodies: invalid JSON, missing or invalid attributes, unknown members', async () => {
  const raw = await api(env.app.url, token).post('/scim/v2/Users', undefined, {
    raw: '{"userName":',
    headers: { 'content-type': 'application/scim+json' },
  });
  assertScimError(raw, 400, 'invalidSyntax');
  assertScimError(
    await client.post('/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] }),
    400,
    'invalidValue',
  );
  assertScimError(await client.post('/Users', { userName: 'no-email-here' }), 400, 'invalidValue');
  assertScimError(await client.post('/Users', userBody('c@acme.example', { active: 'maybe' })), 400, 'invalidValue');
  assertScimError(await client.post('/Users', [userBody('c@acme.example')]), 400, 'invalidSyntax');
  assertScimError(await client.post('/Groups', { displayName: '' }), 400, 'invalidValue');
  assertScimError(
    await client.post('/Groups', { displayName: 'G', members: [{ value: 'scimu_not_a_user' }] }),
    400,
    'invalidValue',
  );
  const text = await api(env.app.url, token).post('/scim/v2/Users', undefined, {
    raw: 'userName=x',
    headers: { 'content-type': 'text/plain' },
  });
  assertScimError(text, 415);
});

test('a body that is not UTF-8 is 400 invalidSyntax, one in another charset 415: nothing is stored with U+FFFD in its place', async () => {
  const group = (name: Buffer) =>
    Buffer.concat([
      Buffer.from('{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"'),
      name,
      Buffer.from('"}'),
    ]);
  const notUtf8 = await api(env.app.url, token).post('/scim/v2/Groups', undefined, {
    raw: group(Buffer.from([0x47, 0xc0, 0xaf, 0xff])),
    headers: { 'content-type': 'application/scim+json' },
  });
  assertScimError(notUtf8, 400, 'invalidSyntax');
  assert.equal(notUtf8.body.detail, 'The body is not valid UTF-8');
  const latin1 = await api(env.app.url, token).post('/scim/v2/Groups', undefined, {
    raw: group(Buffer.from('Caf\xe9', 'latin1')),
    headers: { 'content-type': 'application/scim+json; charset=ISO-8859-1' },
  });
  assertScimError(latin1, 415);
  const listed = await client.get('/Groups');
  assert.ok(!JSON.stringify(listed.body).includes('\ufffd'), 'a group was stored with U+FFFD');
  const utf8 = await api(env.app.url, token).post('/scim/v2/Groups', undefined, {
    raw: group(Buffer.from('Caf\u00e9')),
    headers: { 'content-type': 'application/scim+json; charset="UTF-8"' },
  });
  assert.equal(utf8.status, 201, utf8.text);
  assert.equal(utf8.body.displayName, 'Caf\u00e9');
});

test('bad PATCH requests: 400 with the SCIM type that says why', async () => {
  const user = await client.post('/Users', userBody('patchy@acme.example'));
  const path = `/Users/${user.body.id}`;
  assertScimError(await client.patch(path, patchOp({ op: 'move', path: 'title', value: 'x' })), 400, 'invalidSyntax');
  assertScimError(
    await client.patch(path, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [] }),
    400,
    'invalidSyntax',
  );
  assertScimError(
    await client.patch(path, { schemas: ['urn:wrong'], Operations: [{ op: 'add', path: 'title', value: 'x' }] }),
    400,
    'invalidSyntax',
  );
  assertScimError(await client.patch(path, patchOp({ op: 'remove' })), 400, 'noTarget');
  assertScimError(
    await client.patch(
      path,
      patchOp({ op: 'replace', path: 'emails[value eq "nobody@acme.example"].value', value: 'x' }),
    ),
    400,
    'noTarget',
  );
  assertScimError(await client.patch(path, patchOp({ op: 'replace', path: 'id', value: 'mine' })), 400, 'mutability');
  assertScimError(
    await client.patch(path, patchOp({ op: 'replace', path: 'bad path!', value: 'x' })),
    400,
    'invalidPath',
  );
  assertScimError(
    await client.patch(path, patchOp({ op: 'replace', path: 'userName', value: '' })),
    400,
    'invalidValue',
  );
  // nothing was changed by the failed requests
  assert.equal((await client.get(path)).body.userName, 'patchy@acme.example');
});

test('a body nested deeper than 64 levels: 400 invalidSyntax, nothing stored, whatever the JSON content type', async () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  // 5000 levels is about 10 KB, well under the body limit, and too deep to serialize.
  const deepUser = `{"userName":"deep@acme.example","emails":[{"value":"deep@acme.example"}],"x":${nested(5000)}}`;
  const raw = (method: 'post' | 'patch', path: string, body: string, contentType: string) =>
    api(env.app.url, token)[method](`/scim/v2${path}`, undefined, {
      raw: body,
      headers: { 'content-type': contentType },
    });
  for (const contentType of ['application/scim+json', 'application/json']) {
    assertScimError(await raw('post', '/Users', deepUser, contentType), 400, 'invalidSyntax');
    // one level past the bound is refused too, and the bound itself is accepted
    assertScimError(
      await raw('post', '/Users', `{"userName":"deep@acme.example","x":${nested(64)}}`, contentType),
      400,
      'invalidSyntax',
    );
  }
  const { rows } = await env.app.db.query(
    "SELECT count(*)::int AS n FROM scim_users WHERE user_name = 'deep@acme.example'",
  );
  assert.equal(rows[0].n, 0);

  const edge = await raw(
    'post',
    '/Users',
    `{"userName":"edge@acme.example","x":${nested(63)}}`,
    'application/scim+json',
  );
  assert.equal(edge.status, 201, edge.text);
  const path = `/Users/${edge.body.id}`;
  const deepPatch = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"title","value":"Changed"},{"op":"add","path":"x","value":${nested(5000)}}]}`;
  for (const contentType of ['application/scim+json', 'application/json']) {
    assertScimError(await raw('patch', path, deepPatch, contentType), 400, 'invalidSyntax');
  }
  const after = await client.get(path);
  assert.equal(after.body.title, undefined, 'the refused PATCH changed nothing');
});

test('a DELETE with a SCIM content type and no body is accepted; a malformed body still is not', async () => {
  const user = await client.post('/Users', userBody('bodiless@acme.example'));
  const remove = (raw?: string) =>
    api(env.app.url, token).delete(`/scim/v2/Users/${user.body.id}`, {
      headers: { 'content-type': 'application/scim+json' },
      ...(raw !== undefined ? { raw } : {}),
    });
  assertScimError(await remove('{oops'), 400, 'invalidSyntax');
  assert.equal((await client.get(`/Users/${user.body.id}`)).status, 200, 'the refused DELETE changed nothing');
  const removed = await remove();
  assert.equal(removed.status, 204, removed.text);
  assertScimError(await client.get(`/Users/${user.body.id}`), 404);
});

test('a group deleted just before its PUT: 404, not 500', async () => {
  const group = await client.post('/Groups', { displayName: 'Doomed' });
  assert.equal((await client.delete(`/Groups/${group.body.id}`)).status, 204);
  assertScimError(await client.put(`/Groups/${group.body.id}`, { displayName: 'Doomed again' }), 404);
});

// The races themselves need a second connection: one transaction holds the delete open until the request waits on it.
const raceOptions = { skip: testBackend !== 'postgres' && 'PGlite has one connection: no concurrent transactions' };

test('a group deleted while its PUT waits: 404, not 500', raceOptions, async () => {
  const group = await client.post('/Groups', { displayName: 'Racing' });
  const lock = await holdLocks(env.app, 'DELETE FROM scim_groups WHERE id = $1', [group.body.id]);
  const put = client.put(`/Groups/${group.body.id}`, { displayName: 'Racing on' });
  await lock.waitForBlocked(1);
  await lock.release();
  assertScimError(await put, 404);
});

test(
  'a member deleted while a group write waits on it: 400 unknown member, not 500, nothing written',
  raceOptions,
  async () => {
    const group = await client.post('/Groups', { displayName: 'Members' });
    const writes = [
      (id: string) =>
        client.put(`/Groups/${group.body.id}`, { displayName: 'Members renamed', members: [{ value: id }] }),
      (id: string) =>
        client.patch(`/Groups/${group.body.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: id }] })),
      (id: string) => client.post('/Groups', { displayName: 'Members too', members: [{ value: id }] }),
    ];
    for (const [index, write] of writes.entries()) {
      const user = await client.post('/Users', userBody(`vanishing${index}@acme.example`));
      const lock = await holdLocks(env.app, 'DELETE FROM scim_users WHERE id = $1', [user.body.id]);
      const response = write(user.body.id);
      await lock.waitForBlocked(1);
      await lock.release();
      const answer = await response;
      assertScimError(answer, 400, 'invalidValue');
      assert.match(answer.body.detail, /^Unknown member/);
    }
    const after = await client.get(`/Groups/${group.body.id}`);
    assert.deepEqual([after.body.displayName, after.body.members], ['Members', []]);
    assert.equal(
      (await client.get(`/Groups?filter=${encodeURIComponent('displayName eq "Members too"')}`)).body.totalResults,
      0,
    );
  },
);

// A user's deletion holds the user's row, then deletes their group membership rows; a group write that
// deleted those rows first and then needed the user's row (its foreign key) deadlocked with it (500).
async function userAndGroup(label: string) {
  const user = await client.post('/Users', userBody(`${label}@acme.example`));
  const other = await client.post('/Users', userBody(`${label}-other@acme.example`));
  const members = [{ value: user.body.id }, { value: other.body.id }];
  const group = await client.post('/Groups', { displayName: label, members });
  assert.equal(group.status, 201, group.text);
  return {
    user: user.body.id as string,
    other: other.body.id as string,
    group: group.body.id as string,
    write: (how: 'put' | 'patch') =>
      how === 'put'
        ? client.put(`/Groups/${group.body.id}`, { displayName: `${label} renamed`, members })
        : client.patch(
            `/Groups/${group.body.id}`,
            patchOp({ op: 'replace', path: 'displayName', value: `${label} renamed` }),
          ),
  };
}

test(
  'a user deleted while a group write keeps them as a member: the write is 400 unknown member, never a deadlock (500)',
  raceOptions,
  async () => {
    for (const how of ['put', 'patch'] as const) {
      const race = await userAndGroup(`kept-${how}`);
      const member = (await memberOf(env.app, env.tenant.orgId, `kept-${how}@acme.example`))!;
      // The member's row held: the deletion waits on it holding the user's row, the group write behind.
      const lock = await holdLocks(env.app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [member.id]);
      const deletion = client.delete(`/Users/${race.user}`);
      await lock.waitForBlocked(1);
      const write = race.write(how);
      await lock.waitForBlocked(2);
      await lock.release();
      const [deleted, written] = [await deletion, await write];
      assert.equal(deleted.status, 204, `${how}: ${deleted.text}`);
      assertScimError(written, 400, 'invalidValue');
      assert.match(written.body.detail, /^Unknown member/);
      const after = await client.get(`/Groups/${race.group}`);
      assert.deepEqual(
        [after.body.displayName, after.body.members.map((m: { value: string }) => m.value)],
        [`kept-${how}`, [race.other]],
        how,
      );
    }
  },
);

test('users deleted fired together with group writes keeping them: never a 5xx', async () => {
  for (let round = 0; round < 15; round++) {
    const how = round % 2 === 0 ? 'put' : 'patch';
    const race = await userAndGroup(`kept-round${round}`);
    const [deleted, written] = await Promise.all([client.delete(`/Users/${race.user}`), race.write(how)]);
    const outcome = `round ${round} (${how}): delete ${deleted.status} ${deleted.text}, group ${written.status} ${written.text}`;
    assert.equal(deleted.status, 204, outcome);
    assert.ok(
      written.status === 200 || (written.status === 400 && /^Unknown member/.test(written.body.detail)),
      outcome,
    );
    const after = await client.get(`/Groups/${race.group}`);
    assert.deepEqual(
      after.body.members.map((m: { value: string }) => m.value),
      [race.other],
      outcome,
    );
  }
});

test("a PUT or PATCH taking another account's e-mail: 409 uniqueness, and nothing changes", async () => {
  assert.equal((await client.post('/Users', userBody('holder@acme.example'))).status, 201);
  const taker = await client.post('/Users', userBody('taker@acme.example'));
  const path = `/Users/${taker.body.id}`;
  const taken = [{ value: 'Holder@acme.example', primary: true }];
  assertScimError(
    await client.put(path, userBody('taker@acme.example', { displayName: 'Taker Renamed', emails: taken })),
    409,
    'uniqueness',
  );
  assertScimError(
    await client.patch(
      path,
      patchOp(
        { op: 'replace', path: 'displayName', value: 'Taker Renamed' },
        { op: 'replace', path: 'emails', value: taken },
      ),
    ),
    409,
    'uniqueness',
  );
  const stored = await client.get(path);
  assert.deepEqual([stored.body.displayName, stored.body.emails[0].value], ['Ann Lee', 'taker@acme.example']);
  const { rows } = await env.app.db.query(
    'SELECT u.name, u.email FROM users u JOIN scim_users s ON s.user_id = u.id WHERE s.id = $1',
    [taker.body.id],
  );
  assert.deepEqual(rows[0], { name: 'Ann Lee', email: 'taker@acme.example' });
});

test('a name longer than accounts allow, or an e-mail address sign-up refuses: 400 invalidValue, no account made', async () => {
  const long = 'x'.repeat(201);
  for (const body of [
    userBody('long1@acme.example', { displayName: long }),
    userBody('long2@acme.example', { displayName: undefined, name: { givenName: long, familyName: 'L' } }),
    userBody('dot@acme.example.'),
    userBody('dot2', { emails: [{ value: 'dot2@acme.example.', primary: true }] }),
    userBody('two..dots@acme.example'),
  ]) {
    assertScimError(await client.post('/Users', body), 400, 'invalidValue');
  }
  const { rows } = await env.app.db.query(
    "SELECT count(*)::int AS n FROM users WHERE email LIKE '%acme.example.' OR email LIKE 'long%' OR email LIKE 'two..%' OR length(name) > 200",
  );
  assert.equal(rows[0].n, 0);
  assert.equal(
    (await client.post('/Users', userBody('limit@acme.example', { displayName: 'y'.repeat(200) }))).status,
    201,
    'the limit itself is fine',
  );

  const user = await client.post('/Users', userBody('rules@acme.example'));
  const path = `/Users/${user.body.id}`;
  assertScimError(await client.put(path, userBody('rules@acme.example', { displayName: long })), 400, 'invalidValue');
  assertScimError(
    await client.patch(
      path,
      patchOp({ op: 'replace', path: 'emails', value: [{ value: 'rules@acme.example.', primary: true }] }),
    ),
    400,
    'invalidValue',
  );
  assert.deepEqual((await client.get(path)).body.emails, [
    { type: 'work', value: 'rules@acme.example', primary: true },
  ]);
});

test('two primary e-mail addresses in a POST or PUT: 400 invalidValue', async () => {
  const twoPrimaries = [
    { value: 'twice@acme.example', primary: true },
    { value: 'twice.other@acme.example', primary: 'True' },
  ];
  assertScimError(
    await client.post('/Users', userBody('twice@acme.example', { emails: twoPrimaries })),
    400,
    'invalidValue',
  );
  const user = await client.post('/Users', userBody('twice@acme.example'));
  assert.equal(user.status, 201, user.text);
  assertScimError(
    await client.put(`/Users/${user.body.id}`, userBody('twice@acme.example', { emails: twoPrimaries })),
    400,
    'invalidValue',
  );
});

test('a string where a complex attribute without a value is expected: 400 invalidValue', async () => {
  assertScimError(await client.post('/Users', userBody('qq@acme.example', { name: 'Q Q' })), 400, 'invalidValue');
  const user = await client.post('/Users', userBody('qq@acme.example'));
  const path = `/Users/${user.body.id}`;
  assertScimError(
    await client.put(path, userBody('qq@acme.example', { addresses: ['1 Main St'] })),
    400,
    'invalidValue',
  );
  assertScimError(
    await client.patch(path, patchOp({ op: 'replace', path: 'name', value: 'Q Q' })),
    400,
    'invalidValue',
  );
  assertScimError(await client.patch(path, patchOp({ op: 'replace', value: { name: 'Q Q' } })), 400, 'invalidValue');
  assert.deepEqual((await client.get(path)).body.name, { givenName: 'Ann', familyName: 'Lee' });
});

test('/Me is 501 Not Implemented; a collection path with a trailing slash names nothing: 404; both in SCIM shape', async () => {
  for (const response of [
    await client.get('/Me'),
    await client.post('/Me', userBody('me@acme.example')),
    await client.delete('/Me'),
  ]) {
    assertScimError(response, 501);
  }
  for (const response of [
    await client.get('/Users/'),
    await client.get('/Groups/'),
    await client.put('/Users/', userBody('slash@acme.example')),
    await client.patch('/Groups/', patchOp({ op: 'add', path: 'members', value: [] })),
    await client.delete('/Users/'),
  ]) {
    assertScimError(response, 404);
  }
});

test('a path the router cannot decode (a bad percent-escape) is answered in SCIM shape too', async () => {
  for (const response of [
    await client.get('/Users/%ZZ'),
    await client.patch('/Groups/%E0%A4%A', patchOp({ op: 'add', path: 'members', value: [] })),
  ]) {
    assertScimError(response, 400);
  }
});

// A removal through the API and SCIM's write of the same member, each waiting for the other's rows,
// would deadlock (500): both now take the organization's member changes in turn.
async function removedWhileWritten(label: string, action: 'deactivate' | 'delete') {
  const email = `${label}@acme.example`;
  const user = await client.post('/Users', userBody(email));
  assert.equal(user.status, 201, user.text);
  const member = (await memberOf(env.app, env.tenant.orgId, email))!;
  return {
    memberId: member.id,
    path: `/Users/${user.body.id}`,
    remove: () => api(env.app.url, env.tenant.owner.token).delete(`/v1/orgs/${env.tenant.orgId}/members/${member.id}`),
    write: () =>
      action === 'delete'
        ? client.delete(`/Users/${user.body.id}`)
        : client.patch(`/Users/${user.body.id}`, patchOp({ op: 'replace', path: 'active', value: false })),
  };
}

test(
  'a member removed through the API while SCIM deletes or suspends them: both go through one after the other, never a deadlock (500)',
  raceOptions,
  async () => {
    for (const action of ['deactivate', 'delete'] as const) {
      const race = await removedWhileWritten(`removed-while-${action}`, action);
      // The member's row held: the removal waits on it, SCIM's write behind; released, they meet.
      const lock = await holdLocks(env.app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [race.memberId]);
      const removal = race.remove();
      await lock.waitForBlocked(1);
      const write = race.write();
      await lock.waitForBlocked(2);
      await lock.release();
      const [removed, written] = [await removal, await write];
      assert.equal(removed.status, 204, `${action}: ${removed.text}`);
      assert.equal(written.status, action === 'delete' ? 204 : 200, `${action}: ${written.text}`);
      if (action === 'deactivate') assert.equal(written.body.active, false);
      assert.equal((await client.get(race.path)).status, action === 'delete' ? 404 : 200);
      const { rows } = await env.app.db.query('SELECT count(*)::int AS n FROM members WHERE id = $1', [race.memberId]);
      assert.equal(rows[0].n, 0, `${action}: the member was not removed`);
    }
  },
);

test('removals through the API fired together with SCIM deleting or suspending the member: never a 5xx, the member removed', async () => {
  for (let round = 0; round < 15; round++) {
    for (const action of ['deactivate', 'delete'] as const) {
      const race = await removedWhileWritten(`removed-round${round}-${action}`, action);
      const [removed, written] = await Promise.all([race.remove(), race.write()]);
      const outcome = `round ${round} (${action}): removal ${removed.status} ${removed.text}, SCIM ${written.status} ${written.text}`;
      // A SCIM deletion first leaves the removal nothing to remove; a suspension does.
      assert.ok(
        removed.status === 204 ||
          (action === 'delete' && removed.status === 404 && removed.body.error === 'member_not_found'),
        outcome,
      );
      assert.equal(written.status, action === 'delete' ? 204 : 200, outcome);
      const { rows } = await env.app.db.query('SELECT count(*)::int AS n FROM members WHERE id = $1', [race.memberId]);
      assert.equal(rows[0].n, 0, outcome);
    }
  }
});

// Changes the organization's SSO domain: the last test of this file.
test('while the SSO domain is not verified, provisioning that gives access is paused; removing members and groups is not', async () => {
  const kept = await client.post('/Users', userBody('kept@acme.example'));
  const other = await client.post('/Users', userBody('other@acme.example'));
  const group = await client.post('/Groups', { displayName: 'Paused', members: [{ value: kept.body.id }] });
  const spare = await client.post('/Groups', { displayName: 'Spare' });
  await api(env.app.url, env.tenant.owner.token).put('/v1/sso/connection', {
    domain: 'changed.example',
    issuer: 'https://idp.example.test',
    clientId: 'c',
  });
  assertScimError(await client.post('/Users', userBody('new@changed.example')), 403);
  assertScimError(
    await client.patch(`/Users/${other.body.id}`, patchOp({ op: 'replace', path: 'title', value: 'Still here' })),
    403,
  );
  assertScimError(await client.post('/Groups', { displayName: 'New group' }), 403);
  assertScimError(
    await client.patch(
      `/Groups/${group.body.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: other.body.id }] }),
    ),
    403,
  );
  assertScimError(
    await client.put(`/Groups/${group.body.id}`, {
      displayName: 'Paused',
      members: [{ value: kept.body.id }, { value: other.body.id }],
    }),
    403,
  );
  assert.deepEqual(
    (await client.get(`/Groups/${group.body.id}`)).body.members.map((m: { value: string }) => m.value),
    [kept.body.id],
  );

  const removed = await client.patch(
    `/Groups/${group.body.id}`,
    patchOp({ op: 'remove', path: `members[value eq "${kept.body.id}"]` }),
  );
  assert.equal(removed.status, 200, removed.text);
  assert.deepEqual(removed.body.members, []);
  assert.equal((await client.delete(`/Groups/${spare.body.id}`)).status, 204);
  // reading still works
  assert.equal((await client.get('/Users')).status, 200);
});
