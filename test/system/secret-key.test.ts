// Every process on one database must seal with the same key ring: a process started with another key
// refuses to start (before it can seal a secret the others cannot open), and rotation (a new version in
// front of the old) is accepted.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { checkKeyRing, KeyRingMismatchError } from '../../src/platform/secrets.ts';
import { openTestDatabase, startTestApp, testBackend } from '../support/app.ts';
import { runCli } from '../support/process.ts';

const newKey = () => randomBytes(32).toString('base64');

test('a key ring is held to the keys the database has recorded', async () => {
  const database = await openTestDatabase();
  try {
    await migrate(database.db);
    const first = newKey();
    const other = newKey();
    await checkKeyRing(database.db, `v1:${first}`);
    await checkKeyRing(database.db, `v1:${first}`); // the same ring again: fine

    const mismatch = await checkKeyRing(database.db, `v1:${other}`).catch((error: unknown) => error);
    assert.ok(mismatch instanceof KeyRingMismatchError, String(mismatch));
    assert.match(mismatch.message, /v1.*ORGPLANE_SECRET_KEY/);
    assert.ok(!mismatch.message.includes(first) && !mismatch.message.includes(other), 'no key in the message');

    // Rotation: a new current version in front of the recorded one.
    const next = newKey();
    await checkKeyRing(database.db, `v2:${next},v1:${first}`);
    // v1 left the ring before `orgplane secrets reseal` forgot it: what is sealed with it would not open.
    const withoutV1 = await checkKeyRing(database.db, `v2:${next}`).catch((error: unknown) => error);
    assert.ok(withoutV1 instanceof KeyRingMismatchError, String(withoutV1));
    assert.match(withoutV1.message, /lacks v1, .*orgplane secrets reseal/);
    const beforeRotation = await checkKeyRing(database.db, `v1:${first}`).catch((error: unknown) => error);
    assert.ok(beforeRotation instanceof KeyRingMismatchError, String(beforeRotation));
    assert.match(beforeRotation.message, /lacks v2/);
    const unrelated = await checkKeyRing(database.db, `v3:${newKey()}`).catch((error: unknown) => error);
    assert.ok(unrelated instanceof KeyRingMismatchError, String(unrelated));
    assert.match(unrelated.message, /none of the key versions.*v1, v2/);
    const wrongV2 = await checkKeyRing(database.db, `v3:${newKey()},v2:${other}`).catch((error: unknown) => error);
    assert.ok(wrongV2 instanceof KeyRingMismatchError, String(wrongV2));

    const { rows } = await database.db.query<{ version: string }>(
      'SELECT version FROM secret_key_checks ORDER BY version',
    );
    assert.deepEqual(
      rows.map((row) => row.version),
      ['v1', 'v2'],
      'refused rings record nothing',
    );
  } finally {
    await database.drop();
  }
});

test('a worker process started with another key ring than the server refuses to start', {
  skip: testBackend !== 'postgres' && 'a worker process shares only a PostgreSQL database',
}, async () => {
  const server = await startTestApp();
  try {
    const refused = await runCli(['worker'], {
      DATABASE_URL: server.databaseUrl!,
      ORGPLANE_SECRET_KEY: `v1:${newKey()}`,
    });
    assert.equal(refused.code, 1, refused.output);
    assert.match(refused.output, /orgplane: The secret key v1 is not the v1 this database's secrets were sealed with/);
  } finally {
    await server.close();
  }
});

test('a server started on a database with another key ring refuses to start', async () => {
  const first = await startTestApp();
  try {
    await assert.rejects(
      startTestApp({ secretKey: `v1:${newKey()}` }, { shareDatabaseWith: first }),
      (error: unknown) => error instanceof KeyRingMismatchError,
    );
    // The same ring starts.
    const second = await startTestApp({}, { shareDatabaseWith: first });
    await second.close();
  } finally {
    await first.close();
  }
});
