// src/db/errors.ts reads the cause of real database errors, raised by the backend of this run; and a
// statement the database refuses leaves the pool's connection working (src/db/database.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDataError, isStatementError, isUniqueViolation } from '../../src/db/errors.ts';
import { openDatabase } from '../../src/db/database.ts';
import { freePort, openTestDatabase, testBackend, type TestDatabase } from '../support/app.ts';

let database: TestDatabase;

before(async () => {
  database = await openTestDatabase();
  await database.db.query('CREATE TABLE things (name text PRIMARY KEY, size int CHECK (size >= 0))');
});
after(async () => {
  await database?.drop();
});

async function errorOf(statement: Promise<unknown>): Promise<unknown> {
  try {
    await statement;
  } catch (error) {
    return error;
  }
  throw new Error('the statement did not fail');
}

test('a duplicate key is a unique violation, and an error of the data', async () => {
  await database.db.query("INSERT INTO things VALUES ('a', 1)");
  const error = await errorOf(database.db.query("INSERT INTO things VALUES ('a', 2)"));
  assert.equal(isUniqueViolation(error), true);
  assert.equal(isDataError(error), true);
});

test('values the database refuses are errors of the data, not unique violations', async () => {
  for (const statement of [
    'SELECT 1 / 0',
    "INSERT INTO things VALUES ('b', -1)",
    "SELECT 'not a number'::int",
    String.raw`SELECT '"a\u0000b"'::jsonb`,
  ]) {
    const error = await errorOf(database.db.query(statement));
    assert.equal(isDataError(error), true, statement);
    assert.equal(isUniqueViolation(error), false, statement);
    assert.equal(isStatementError(error), true, statement);
  }
});

test('a statement that is wrong in itself, or a raised exception of another class, is not an error of the data', async () => {
  for (const statement of [
    'SELECT * FROM no_such_table',
    "DO $$ BEGIN RAISE EXCEPTION 'stop' USING ERRCODE = '57014'; END $$",
  ]) {
    const error = await errorOf(database.db.query(statement));
    assert.equal(isDataError(error), false, statement);
  }
});

test('a database that cannot be reached is not an error of the data', {
  skip: testBackend !== 'postgres' && 'PGlite runs in this process',
}, async () => {
  const unreachable = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` });
  try {
    const error = await errorOf(unreachable.query('SELECT 1'));
    assert.equal(isDataError(error), false);
    assert.equal(isUniqueViolation(error), false);
    assert.equal(isStatementError(error), false);
  } finally {
    await unreachable.close();
  }
});

test('after a statement fails, the next ones on the same connection succeed: plain, with parameters and prepared', async () => {
  const backendPid = async () =>
    (await database.db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const before = await backendPid();
  for (let round = 0; round < 3; round += 1) {
    await errorOf(database.db.query('SELECT 1 / $1::int', [0]));
    assert.deepEqual((await database.db.query('SELECT 2 AS two')).rows, [{ two: 2 }]);
    await errorOf(database.db.prepared('divide', 'SELECT 1 / $1::int AS quotient', [0]));
    assert.deepEqual((await database.db.prepared('divide', 'SELECT 1 / $1::int AS quotient', [1])).rows, [
      { quotient: 1 },
    ]);
    assert.deepEqual((await database.db.query('SELECT $1::int AS three', [3])).rows, [{ three: 3 }]);
  }
  // The refused statements did not cost the connection: it is the one from before.
  assert.equal(await backendPid(), before);
});

test('anything else is neither', () => {
  for (const value of [
    undefined,
    null,
    'text',
    new Error('plain'),
    Object.assign(new Error('socket'), { code: 'EPIPE' }),
    { code: 22012 },
  ]) {
    assert.equal(isDataError(value), false);
    assert.equal(isUniqueViolation(value), false);
    assert.equal(isStatementError(value), false);
  }
});
