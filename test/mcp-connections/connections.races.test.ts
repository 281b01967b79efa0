// Writes that race with removals: a member (or the calling admin) removed or demoted while the server
// is probed, an access replace racing a removal, a connection deleted as a write commits. These used
// to surface as 500s (a foreign-key violation, a deadlock, a TypeError). The moment is set without
// timing: the MCP server acts when the probe reaches it, a transaction holding rows (PostgreSQL) makes
// the request wait where the race lands, and a trigger deletes the connection inside the writing
// transaction, which is what a DELETE landing between the commit and the re-read of the row looks like
// to the service.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend, type TestApp } from '../support/app.ts';
import { holdLocks } from '../support/held-locks.ts';
import { addMember, signUp, type Tenant, type TestUser } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { api, connectionBody, createConnection, setup } from './helpers.ts';

let app: TestApp;
let tenant: Tenant;
let open: RunningServer;
let keyed: RunningServer;
/** Run once, when the next probe reaches `open`. */
let atNextProbe: (() => Promise<void>) | undefined;

before(async () => {
  ({ app, tenant } = await setup());
  open = await startStreamableServer({
    onRequest: async () => {
      const action = atNextProbe;
      atNextProbe = undefined;
      await action?.();
    },
  });
  keyed = await startStreamableServer({
    apiKey: 'race-key',
    onRequest: async () => {
      const action = atNextProbe;
      atNextProbe = undefined;
      await action?.();
    },
  });
});

after(async () => {
  await open.close();
  await keyed.close();
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);

async function newMember(label: string, role: 'admin' | 'member' = 'member'): Promise<TestUser> {
  const user = await signUp(app.url, label);
  await addMember(app.url, tenant.owner, tenant.orgId, user, role);
  return user;
}

const remove = (user: TestUser) =>
  api(app.url, tenant.owner.token).delete(`/v1/orgs/${tenant.orgId}/members/${user.memberId}`);

function removeDuringProbe(user: TestUser) {
  atNextProbe = async () => {
    const removed = await remove(user);
    assert.equal(removed.status, 204, removed.text);
  };
}

function demoteDuringProbe(user: TestUser) {
  atNextProbe = async () => {
    const demoted = await api(app.url, tenant.owner.token).patch(`/v1/orgs/${tenant.orgId}/members/${user.memberId}`, {
      role: 'member',
    });
    assert.equal(demoted.status, 200, demoted.text);
  };
}

async function connectionCount(): Promise<number> {
  const { rows } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_connections');
  return rows[0]!.n;
}

describe('a member removed while the server is probed', () => {
  test('create: 400 invalid_request pointing at the member, nothing written', async () => {
    const doomed = await newMember('doomed-create');
    const count = await connectionCount();
    removeDuringProbe(doomed);
    const response = await admin().post(
      '/v1/mcp-connections',
      connectionBody(open.url, {
        access: { memberIds: [tenant.member.memberId, doomed.memberId] },
      }),
    );
    assert.equal(atNextProbe, undefined, 'the probe reached the server');
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error, 'invalid_request');
    assert.deepEqual(
      response.body.details.map((detail: { path: unknown[] }) => detail.path.map(String)),
      [['access', 'memberIds', '1']],
    );
    assert.equal(await connectionCount(), count, 'nothing written');
  });

  test('edit: 400 invalid_request pointing at the member, the connection unchanged', async () => {
    const connection = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { name: 'Before' }),
    );
    const doomed = await newMember('doomed-edit');
    removeDuringProbe(doomed);
    const response = await admin().put(`/v1/mcp-connections/${connection.id}`, {
      expectedUpdatedAt: connection.updatedAt,
      name: 'After',
      url: `${open.url}?moved=1`, // a new identity: probed
      authType: 'none',
      credentialMode: 'shared',
      access: { memberIds: [doomed.memberId] },
    });
    assert.equal(atNextProbe, undefined, 'the probe reached the server');
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error, 'invalid_request');
    assert.deepEqual(
      response.body.details.map((detail: { path: unknown[] }) => detail.path.map(String)),
      [['access', 'memberIds', '0']],
    );
    const after = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
    assert.equal(after.name, 'Before');
    assert.equal(after.updatedAt, connection.updatedAt);
  });
});

// A member storing their own key on a per-member connection, removed after the request was
// authenticated: the answer is the one a session that is no longer a member gets, not a 500 (the
// foreign key of their credential row refused it), and nothing is stored.
describe('a member removed while storing their own API key', () => {
  const credentialCount = async (connectionId: string) =>
    (
      await app.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE connection_id = $1',
        [connectionId],
      )
    ).rows[0]!.n;

  /** The same request again, now that the removal is committed: what a non-member gets. */
  async function assertAnsweredAsNonMember(
    user: TestUser,
    connectionId: string,
    response: { status: number; body: any; text: string },
  ) {
    const again = await api(app.url, user.token).put(`/v1/mcp-connections/${connectionId}/credentials`, {
      apiKey: 'race-key',
    });
    assert.equal(again.status, 403, again.text);
    assert.equal(response.status, again.status, response.text);
    assert.deepEqual(response.body, again.body);
  }

  test('removed while the key is probed: 403 forbidden like any non-member, nothing stored', async () => {
    const perMember = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { name: 'Per member (probed)', authType: 'apikey', credentialMode: 'per_member' }),
    );
    const doomed = await newMember('doomed-key');
    removeDuringProbe(doomed);
    const response = await api(app.url, doomed.token).put(`/v1/mcp-connections/${perMember.id}/credentials`, {
      apiKey: 'race-key',
    });
    assert.equal(atNextProbe, undefined, 'the probe reached the server');
    assert.equal(response.status, 403, response.text);
    assert.equal(response.body.error, 'forbidden');
    assert.equal(await credentialCount(perMember.id), 0, 'nothing stored');
    await assertAnsweredAsNonMember(doomed, perMember.id, response);
  });

  test('removal in progress as the key is written: the write waits for it, then 403 forbidden, nothing stored', {
    skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
  }, async () => {
    const perMember = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { name: 'Per member (held)', authType: 'apikey', credentialMode: 'per_member' }),
    );
    const doomed = await newMember('doomed-held-key');
    // The removal, uncommitted: the request is authenticated and probed as a member, then its write waits for the member row.
    const removing = await holdLocks(app, 'DELETE FROM members WHERE id = $1', [doomed.memberId]);
    const storing = api(app.url, doomed.token).put(`/v1/mcp-connections/${perMember.id}/credentials`, {
      apiKey: 'race-key',
    });
    await removing.waitForBlocked(1);
    await removing.release();
    const response = await storing;
    assert.equal(response.status, 403, response.text);
    assert.equal(response.body.error, 'forbidden');
    assert.equal(await credentialCount(perMember.id), 0, 'nothing stored');
    await assertAnsweredAsNonMember(doomed, perMember.id, response);
  });
});

// An admin creating or editing a connection, removed or demoted after the request was authenticated:
// they get what the route answers them now (a removal was a 500, the foreign key of their own
// credential row; a demotion went through), and nothing is written.
describe('an admin removed or demoted while writing a connection', () => {
  type Response = { status: number; body: any; text: string };
  const perMemberBody = (name: string) =>
    connectionBody(keyed.url, { name, authType: 'apikey', credentialMode: 'per_member', apiKey: 'race-key' });
  const editBody = (connection: { name: string; updatedAt: string }) => ({
    expectedUpdatedAt: connection.updatedAt,
    name: connection.name,
    url: keyed.url,
    authType: 'apikey',
    credentialMode: 'per_member',
    access: { orgWide: true },
    apiKey: 'race-key', // a new key: probed, and stored as the caller's own
  });
  const credentialCount = async (connectionId: string) =>
    (
      await app.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE connection_id = $1',
        [connectionId],
      )
    ).rows[0]!.n;

  /** The same request again, now that the change is committed: the route's answer to who they are now. */
  async function assertAnsweredAsNow(
    again: Promise<Response>,
    response: Response,
    expected: { status: number; message: RegExp },
  ) {
    const now = await again;
    assert.equal(now.status, expected.status, now.text);
    assert.match(now.body.message, expected.message);
    assert.equal(response.status, now.status, response.text);
    assert.deepEqual(response.body, now.body);
  }
  const nonMember = { status: 403, message: /no active organization/ };
  const nonAdmin = { status: 403, message: /mcp_connections.manage/ };

  test('create, removed while the server is probed: 403 forbidden like any non-member, nothing written', async () => {
    const doomed = await newMember('doomed-creator', 'admin');
    const count = await connectionCount();
    removeDuringProbe(doomed);
    const response = await api(app.url, doomed.token).post(
      '/v1/mcp-connections',
      perMemberBody('Created by the removed'),
    );
    assert.equal(atNextProbe, undefined, 'the probe reached the server');
    assert.equal(response.status, 403, response.text);
    assert.equal(await connectionCount(), count, 'nothing written');
    await assertAnsweredAsNow(
      api(app.url, doomed.token).post('/v1/mcp-connections', perMemberBody('Created by the removed')),
      response,
      nonMember,
    );
  });

  test('create, demoted while the server is probed: 403 forbidden like any member, nothing written', async () => {
    const demoted = await newMember('demoted-creator', 'admin');
    const count = await connectionCount();
    demoteDuringProbe(demoted);
    const response = await api(app.url, demoted.token).post(
      '/v1/mcp-connections',
      perMemberBody('Created by the demoted'),
    );
    assert.equal(atNextProbe, undefined, 'the probe reached the server');
    assert.equal(response.status, 403, response.text);
    assert.equal(await connectionCount(), count, 'nothing written');
    await assertAnsweredAsNow(
      api(app.url, demoted.token).post('/v1/mcp-connections', perMemberBody('Created by the demoted')),
      response,
      nonAdmin,
    );
  });

  for (const [change, during, answer] of [
    ['removed', removeDuringProbe, nonMember],
    ['demoted', demoteDuringProbe, nonAdmin],
  ] as const) {
    test(`edit, ${change} while the new key is probed: 403 forbidden, the connection unchanged, no key stored`, async () => {
      const connection = await createConnection(
        app.url,
        tenant.admin.token,
        connectionBody(keyed.url, {
          name: `Edited by the ${change}`,
          authType: 'apikey',
          credentialMode: 'per_member',
        }),
      );
      const editor = await newMember(`${change}-editor`, 'admin');
      during(editor);
      const response = await api(app.url, editor.token).put(
        `/v1/mcp-connections/${connection.id}`,
        editBody(connection),
      );
      assert.equal(atNextProbe, undefined, 'the probe reached the server');
      assert.equal(response.status, 403, response.text);
      assert.equal(
        (await admin().get(`/v1/mcp-connections/${connection.id}`)).body.updatedAt,
        connection.updatedAt,
        'unchanged',
      );
      assert.equal(await credentialCount(connection.id), 0, 'no key stored');
      await assertAnsweredAsNow(
        api(app.url, editor.token).put(`/v1/mcp-connections/${connection.id}`, editBody(connection)),
        response,
        answer,
      );
    });
  }

  test('create, removal in progress as the connection is written: the write waits for it, then 403, nothing written', {
    skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
  }, async () => {
    const doomed = await newMember('doomed-held-creator', 'admin');
    const count = await connectionCount();
    // The removal, uncommitted: the request is authenticated and probed as an admin, then its write waits for the member row.
    const removing = await holdLocks(app, 'DELETE FROM members WHERE id = $1', [doomed.memberId]);
    const creating = api(app.url, doomed.token).post('/v1/mcp-connections', perMemberBody('Created during a removal'));
    await removing.waitForBlocked(1);
    await removing.release();
    const response = await creating;
    assert.equal(response.status, 403, response.text);
    assert.equal(await connectionCount(), count, 'nothing written');
    await assertAnsweredAsNow(
      api(app.url, doomed.token).post('/v1/mcp-connections', perMemberBody('Created during a removal')),
      response,
      nonMember,
    );
  });

  test('edit, removal in progress as the connection is written: the write waits for it, then 403, unchanged', {
    skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
  }, async () => {
    const connection = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { name: 'Edited during a removal', authType: 'apikey', credentialMode: 'per_member' }),
    );
    const doomed = await newMember('doomed-held-editor', 'admin');
    const removing = await holdLocks(app, 'DELETE FROM members WHERE id = $1', [doomed.memberId]);
    const editing = api(app.url, doomed.token).put(`/v1/mcp-connections/${connection.id}`, editBody(connection));
    await removing.waitForBlocked(1);
    await removing.release();
    const response = await editing;
    assert.equal(response.status, 403, response.text);
    assert.equal(
      (await admin().get(`/v1/mcp-connections/${connection.id}`)).body.updatedAt,
      connection.updatedAt,
      'unchanged',
    );
    assert.equal(await credentialCount(connection.id), 0, 'no key stored');
    await assertAnsweredAsNow(
      api(app.url, doomed.token).put(`/v1/mcp-connections/${connection.id}`, editBody(connection)),
      response,
      nonMember,
    );
  });

  test('create with their own key and their removal fired together: never a 5xx, never a key of a non-member', async () => {
    for (let round = 0; round < 6; round++) {
      const racer = await newMember(`racing-creator-${round}`, 'admin');
      const [created, removed] = await Promise.all([
        api(app.url, racer.token).post('/v1/mcp-connections', perMemberBody(`Race ${round}`)),
        remove(racer),
      ]);
      assert.equal(removed.status, 204, removed.text);
      assert.ok(created.status === 201 || created.status === 403, created.text);
    }
    const { rows } = await app.db.query(
      'SELECT id FROM mcp_connection_credentials c WHERE member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members m WHERE m.id = c.member_id)',
    );
    assert.deepEqual(rows, []);
  });
});

// Replacing the access list while a member it names is removed: the access replace deleted the
// connection's access rows, the removal's cascade waited on one of them, and the re-insert's
// foreign-key check waited on the member: a deadlock, one of the two a 500.
describe('access replaced while a member it names is removed', {
  skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
}, () => {
  let teamId: string;
  before(async () => {
    const team = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Racers' });
    assert.equal(team.status, 201, team.text);
    teamId = team.body.team.id;
  });
  const grantedTo = (member: TestUser) => ({
    access: { orgWide: false, memberIds: [member.memberId], teamIds: [teamId] },
  });

  test('the replace takes the member first: the removal waits for it, both succeed, the grant goes with the member', async () => {
    const granted = await newMember('granted-held');
    const connection = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { name: 'Replaced during a removal', ...grantedTo(granted) }),
    );
    // Holds the connection's team grant: the replace waits on it, after it has taken what it needs before deleting rows.
    const holding = await holdLocks(app, 'SELECT 1 FROM mcp_connection_teams WHERE connection_id = $1 FOR UPDATE', [
      connection.id,
    ]);
    const replacing = admin().put(`/v1/mcp-connections/${connection.id}/access`, grantedTo(granted));
    await holding.waitForBlocked(1);
    const removing = remove(granted);
    await holding.waitForBlocked(2);
    await holding.release();
    const [replaced, removed] = await Promise.all([replacing, removing]);
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(removed.status, 204, removed.text);
    assert.deepEqual((await admin().get(`/v1/mcp-connections/${connection.id}`)).body.access, {
      orgWide: false,
      memberIds: [],
      teamIds: [teamId],
    });
  });
});

describe('a connection deleted as the write commits', () => {
  before(async () => {
    // Deletes a connection named 'Doomed' when its access or credential rows are written.
    await app.db.query(`
      CREATE FUNCTION test_delete_doomed_connection() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM mcp_connections WHERE id = NEW.connection_id AND name = 'Doomed';
        RETURN NULL;
      END $$`);
    await app.db.query(`CREATE TRIGGER test_doomed_members AFTER INSERT ON mcp_connection_members
      FOR EACH ROW EXECUTE FUNCTION test_delete_doomed_connection()`);
    await app.db.query(`CREATE TRIGGER test_doomed_credentials AFTER INSERT OR UPDATE ON mcp_connection_credentials
      FOR EACH ROW EXECUTE FUNCTION test_delete_doomed_connection()`);
  });

  test('create: 404 connection_not_found, not a 500', async () => {
    const created = await admin().post(
      '/v1/mcp-connections',
      connectionBody(open.url, { name: 'Doomed', access: { memberIds: [tenant.member.memberId] } }),
    );
    assert.equal(created.status, 404, created.text);
    assert.equal(created.body.error, 'connection_not_found');
  });

  test('edit: 404 connection_not_found, not a 500', async () => {
    const edited = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { name: 'To be doomed' }),
    );
    const edit = await admin().put(`/v1/mcp-connections/${edited.id}`, {
      expectedUpdatedAt: edited.updatedAt,
      name: 'Doomed',
      url: edited.url,
      authType: 'none',
      credentialMode: 'shared',
      access: { memberIds: [tenant.member.memberId] },
    });
    assert.equal(edit.status, 404, edit.text);
    assert.equal(edit.body.error, 'connection_not_found');
    assert.equal(
      (await app.db.query('SELECT id FROM mcp_connections WHERE id = $1', [edited.id])).rows.length,
      0,
      'the deletion did happen',
    );
  });

  test('storing a key: 404 connection_not_found, not a 500', async () => {
    const keyedConnection = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { name: 'Keyed', authType: 'apikey', apiKey: 'race-key' }),
    );
    const renamed = await admin().put(`/v1/mcp-connections/${keyedConnection.id}`, {
      expectedUpdatedAt: keyedConnection.updatedAt,
      name: 'Doomed', // a name-only edit writes no access or credential row
      url: keyedConnection.url,
      authType: 'apikey',
      credentialMode: 'shared',
      access: { orgWide: true },
    });
    assert.equal(renamed.status, 200, renamed.text);
    const stored = await admin().put(`/v1/mcp-connections/${keyedConnection.id}/credentials`, { apiKey: 'race-key' });
    assert.equal(stored.status, 404, stored.text);
    assert.equal(stored.body.error, 'connection_not_found');
    assert.equal(
      (await app.db.query('SELECT id FROM mcp_connections WHERE id = $1', [keyedConnection.id])).rows.length,
      0,
      'the deletion did happen',
    );
  });
});

// A plugin installed while the connection it would reuse is being deleted: the delete came first, so
// the plugin brings a connection of its own (it was a 500, a foreign-key violation on the link).
describe('a plugin installed as the connection it would reuse is deleted', {
  skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
}, () => {
  test('the install waits for the delete, then creates its own connection', async () => {
    const reused = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(`${open.url}?plugin-race=1`, { name: 'Soon gone' }),
    );
    const deleting = await holdLocks(app, 'DELETE FROM mcp_connections WHERE id = $1', [reused.id]);
    const install = admin().post('/v1/plugins', {
      manifest: {
        name: 'Racing Plugin',
        mcpConnections: [
          { name: 'Docs', url: `${open.url}?plugin-race=1`, authType: 'none', credentialMode: 'shared' },
        ],
      },
    });
    await deleting.waitForBlocked(1);
    await deleting.release();
    const installed = await install;
    assert.equal(installed.status, 201, installed.text);
    const [connectionId] = installed.body.plugin.requires;
    assert.notEqual(connectionId, reused.id);
    assert.equal((await admin().get(`/v1/mcp-connections/${connectionId}`)).status, 200);
  });
});
