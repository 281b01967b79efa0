// No module's SQL writes or locks another module's tables (the owner stays free to change its rules: a
// module reaches another only through its index.ts; reading another's tables in a join for a view stays
// allowed). The owner of a table is the module whose migration range created it (test/boundaries/sql-ownership.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeTouch, foreignTouches, PLATFORM, sqlLiterals, tableOwners, touchedTables } from './sql-ownership.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const owners = tableOwners(fileURLToPath(new URL('../../src/db/migrations/', import.meta.url)));

test('every table a migration creates has an owner', () => {
  assert.equal(owners.get('members')?.owner, 'identity');
  assert.equal(owners.get('organizations')?.owner, 'organizations');
  assert.equal(owners.get('mcp_oauth_connection_state')?.owner, 'mcp-connections');
  assert.equal(owners.get('install_links')?.owner, 'install-links');
  assert.equal(owners.get('sso_connections')?.owner, 'sso');
  assert.equal(owners.get('scim_users')?.owner, 'scim');
  assert.equal(owners.get('memory_blocks')?.owner, 'memory');
  assert.equal(owners.get('messenger_updates')?.owner, 'messenger');
  assert.equal(owners.get('secret_key_checks')?.owner, PLATFORM);
  assert.equal(owners.get('rate_limit_counters')?.owner, PLATFORM);
});

test('the reader finds writes and row locks, and passes over reads', () => {
  const tables = (sql: string) => touchedTables(sql).map((touch) => `${touch.how} ${touch.table}`);
  assert.deepEqual(tables('INSERT INTO members (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET role = EXCLUDED.role'), [
    'INSERT members',
  ]);
  assert.deepEqual(tables('UPDATE members m SET status = $2 FROM users u WHERE u.id = m.user_id'), ['UPDATE members']);
  assert.deepEqual(tables('DELETE FROM sessions WHERE user_id = $1'), ['DELETE sessions']);
  assert.deepEqual(tables('SELECT id FROM organizations WHERE id = $1 FOR UPDATE'), ['FOR UPDATE organizations']);
  assert.deepEqual(
    tables('SELECT c.id FROM mcp_connections c JOIN members m ON m.id = c.member_id WHERE c.id = $1 FOR UPDATE OF c'),
    ['FOR UPDATE mcp_connections'],
  );
  assert.deepEqual(tables('SELECT c.id FROM mcp_connections c JOIN members m ON m.id = c.member_id FOR SHARE'), [
    'FOR SHARE mcp_connections',
    'FOR SHARE members',
  ]);
  // The lock of a CTE's SELECT covers that SELECT's table, not the sub-select in its WHERE.
  assert.deepEqual(
    tables(`WITH named AS (SELECT id FROM messenger_connections WHERE id IN (SELECT connection_id FROM input) FOR KEY SHARE)
            INSERT INTO messenger_updates (id) SELECT id FROM named`),
    ['INSERT messenger_updates', 'FOR KEY SHARE messenger_connections'],
  );
  assert.deepEqual(tables('SELECT m.id FROM members m JOIN users u ON u.id = m.user_id WHERE m.id = $1'), []);
  assert.deepEqual(tables("SELECT 'UPDATE users SET x' AS text FROM users -- DELETE FROM users"), []);

  const literals = sqlLiterals(
    'store.ts',
    [
      'const lock = true;',
      "db.query(`SELECT ${columns} FROM sso_connections WHERE organization_id = $1${lock ? ' FOR UPDATE' : ''}`);",
      "db.query('UPDATE users ' + 'SET name = $2 WHERE id = $1');",
      'db.query(`DELETE FROM ${table} WHERE id = $1`);',
      "throw new Error('no SQL here');",
    ].join('\n'),
  );
  assert.deepEqual(
    literals.map((literal) => literal.line),
    [2, 3, 4],
  );
  assert.deepEqual(
    literals.flatMap((literal) => touchedTables(literal.sql)),
    [
      { how: 'FOR UPDATE', table: 'sso_connections' },
      { how: 'UPDATE', table: 'users' },
      { how: 'DELETE', table: null },
    ],
  );
});

test("no module's SQL writes or locks a table another module owns", () => {
  const foreign = foreignTouches(root, owners);
  assert.deepEqual(
    foreign.map(describeTouch),
    [],
    `writes or locks of another module's tables (use that module's index.ts instead):\n${foreign.map(describeTouch).join('\n')}`,
  );
});
