// The checker of test/db/tenant-routing.ts on statements written to pass and to fail it, on the migrated
// schema: it must catch each kind of statement that would leave one tenant, and pass the ones that stay.
// The app's own statements are checked with it in test/reliability/authorization-matrix.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useMigratedDatabase } from '../support/migrated-database.ts';
import { statementProblems } from './tenant-routing.ts';

const database = useMigratedDatabase();

const problems = (text: string, values: unknown[] = []) => statementProblems(database.db, { text, values });

test('statements that name their tenant pass', async () => {
  assert.deepEqual(
    await problems('SELECT * FROM members WHERE organization_id = $1 AND id = $2', ['org_a', 'mem_a']),
    [],
  );
  assert.deepEqual(
    await problems('SELECT * FROM members WHERE organization_id = $1 AND id = $2 FOR SHARE', ['org_a', 'mem_a']),
    [],
  );
  assert.deepEqual(
    await problems(
      `SELECT t.name FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
        WHERE tm.organization_id = $1 AND tm.member_id = $2`,
      ['org_a', 'mem_a'],
    ),
    [],
  );
  assert.deepEqual(
    await problems(
      `SELECT s.id, m.role FROM sessions s LEFT JOIN user_memberships m ON m.user_id = s.user_id AND m.organization_id = s.active_organization_id
        WHERE s.user_id = ANY($1::text[]) AND s.token_hash = ANY($2::text[])`,
      [['usr_a'], ['hash']],
    ),
    [],
  );
  assert.deepEqual(
    await problems('UPDATE audit_streams SET enabled = false WHERE organization_id = $1', ['org_a']),
    [],
  );
  assert.deepEqual(await problems('SELECT count(*) FROM audit_events WHERE chain_id = $1', ['org_a']), []);
});

test('statements that leave their tenant are caught, each for its reason', async () => {
  assert.match(
    (await problems('SELECT * FROM members WHERE id = $1', ['mem_a'])).join('\n'),
    /reads members without naming its organization_id/,
  );
  assert.match(
    (await problems('SELECT * FROM audit_events WHERE organization_id = $1', ['org_a'])).join('\n'),
    /reads audit_events without naming its chain_id/,
  );
  assert.match(
    (await problems('SELECT id FROM messenger_connections WHERE id = ANY($1::text[]) FOR KEY SHARE', [['mbc_a']])).join(
      '\n',
    ),
    /locks rows of messenger_connections without naming its organization_id/,
  );
  assert.match(
    (
      await problems(
        `SELECT s.id, m.role FROM sessions s JOIN members m ON m.organization_id = s.active_organization_id AND m.user_id = s.user_id
        WHERE s.user_id = $1`,
        ['usr_a'],
      )
    ).join('\n'),
    /joins (members|sessions) \(by (organization_id|user_id)\) to (sessions|members)/,
  );
  assert.match(
    (await problems('UPDATE sessions SET revoked_at = now() WHERE id = $1', ['ses_a'])).join('\n'),
    /reads sessions without naming its user_id/,
  );
});

test('a deliberate read across organizations passes, but may not lock', async () => {
  const discovery = 'SELECT s.organization_id FROM audit_streams s WHERE s.enabled ORDER BY s.run_after LIMIT $1';
  assert.deepEqual(await problems(discovery, [4]), []);
  assert.match((await problems(`${discovery} FOR UPDATE SKIP LOCKED`, [4])).join('\n'), /locks rows of audit_streams/);
});

test('a lock pinned only by a join on the distribution column (to a CTE, or between tables read whole) is caught; pinned to a value, it passes', async () => {
  const claim = (pin: string) => `WITH due AS (
       SELECT c.organization_id, c.id FROM mcp_connections c
        WHERE ${pin} EXISTS (SELECT 1 FROM mcp_connection_credentials k WHERE k.organization_id = c.organization_id AND k.connection_id = c.id AND k.health_due_at IS NULL)
        LIMIT 10 FOR NO KEY UPDATE OF c SKIP LOCKED)
     UPDATE mcp_connections c SET health_lease_token = 'x' FROM due WHERE c.organization_id = due.organization_id AND c.id = due.id`;
  assert.match(
    (await problems(claim(''))).join('\n'),
    /locks rows of mcp_connections without naming its organization_id/,
  );
  assert.deepEqual(await problems(claim('c.organization_id = $1 AND'), ['org_a']), []);
  const joined = (
    pin: string,
  ) => `SELECT t.id FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
     WHERE ${pin} tm.member_id = $1 FOR UPDATE OF t`;
  assert.match(
    (await problems(joined(''), ['mem_a'])).join('\n'),
    /locks rows of teams without naming its organization_id/,
  );
  assert.deepEqual(await problems(joined('tm.organization_id = $2 AND'), ['mem_a', 'org_a']), []);
  // Several organizations named at once (the webhook's claims of a batch, before they were grouped by
  // organization): each of their shards would be locked in one statement.
  assert.match(
    (
      await problems(
        'SELECT id FROM messenger_connections WHERE organization_id = ANY($1) AND id = ANY($2) FOR KEY SHARE',
        [
          ['org_a', 'org_b'],
          ['emc_a', 'emc_b'],
        ],
      )
    ).join('\n'),
    /locks rows of messenger_connections without naming its organization_id/,
  );
});
