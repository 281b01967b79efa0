// The migrated schema keeps the rules that let Citus distribute it by tenant, read from the
// catalog the migrations leave, against the classes of src/db/distribution.ts. Citus itself is not
// here: these are the checks its create_distributed_table and create_reference_table make, plus the
// stricter "the tenant column first" of the multi-tenant model (an index that leads with it serves the
// tenant's queries, one that merely contains it may not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/database.ts';
import { TABLE_CLASSES, isDistributed, type TableClass } from '../../src/db/distribution.ts';
import { useMigratedDatabase } from '../support/migrated-database.ts';

const database = useMigratedDatabase();

interface UniqueIndex {
  table: string;
  index: string;
  first_column: string | null;
  definition: string;
}
interface ForeignKey {
  table: string;
  name: string;
  columns: string[];
  referenced: string;
  referenced_columns: string[];
  on_delete: string;
  definition: string;
}

async function tables(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

/** Every unique index (primary keys and unique constraints are ones too), with its first key column (NULL: an expression). */
async function uniqueIndexes(db: Queryable): Promise<UniqueIndex[]> {
  const { rows } = await db.query<UniqueIndex>(
    `SELECT t.relname AS table, x.relname AS index, a.attname AS first_column, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_class x ON x.oid = i.indexrelid
       LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
      WHERE t.relnamespace = 'public'::regnamespace AND i.indisunique
      ORDER BY 1, 2`,
  );
  return rows;
}

async function foreignKeys(db: Queryable): Promise<ForeignKey[]> {
  const { rows } = await db.query<ForeignKey>(
    `SELECT t.relname AS table, k.conname AS name, r.relname AS referenced, k.confdeltype AS on_delete,
            pg_get_constraintdef(k.oid) AS definition,
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o) AS referenced_columns
       FROM pg_constraint k
       JOIN pg_class t ON t.oid = k.conrelid
       JOIN pg_class r ON r.oid = k.confrelid
      WHERE k.contype = 'f' AND t.relnamespace = 'public'::regnamespace
      ORDER BY 1, 2`,
  );
  return rows;
}

/** What Citus would refuse, or the multi-tenant model forbids, in the migrated schema: one line each. */
async function distributionViolations(db: Queryable): Promise<string[]> {
  const violations: string[] = [];
  const present = await tables(db);
  const classOf = (table: string): TableClass | undefined => TABLE_CLASSES[table];

  for (const table of present) {
    if (!classOf(table))
      violations.push(`${table}: in no class of src/db/distribution.ts (tenant, user, reference or local)`);
  }
  for (const table of Object.keys(TABLE_CLASSES)) {
    if (!present.includes(table))
      violations.push(`${table}: classified in src/db/distribution.ts but no migration creates it`);
  }

  const primaryKeys = new Set(
    (
      await db.query<{ table: string }>(
        `SELECT t.relname AS table FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
      WHERE t.relnamespace = 'public'::regnamespace AND i.indisprimary`,
      )
    ).rows.map((row) => row.table),
  );
  for (const table of present) {
    const found = classOf(table);
    if (found && isDistributed(found) && !primaryKeys.has(table))
      violations.push(`${table}: distributed by ${found.column} but has no primary key`);
  }

  for (const index of await uniqueIndexes(db)) {
    const found = classOf(index.table);
    if (!found || !isDistributed(found)) continue;
    if (index.first_column !== found.column) {
      violations.push(
        `${index.table}: unique index ${index.index} does not start with the distribution column ${found.column}: ${index.definition}`,
      );
    }
  }

  for (const key of await foreignKeys(db)) {
    const from = classOf(key.table);
    const to = classOf(key.referenced);
    if (!from || !to) continue;
    const fromColumn = isDistributed(from) ? from.column : undefined;
    if (isDistributed(from) && isDistributed(to)) {
      const at = key.columns.indexOf(from.column);
      if (from.kind !== to.kind || at === -1 || key.referenced_columns[at] !== to.column) {
        violations.push(
          `${key.table}: foreign key ${key.name} to ${key.referenced} does not pair the distribution columns (${from.column} with ${to.column}): ${key.definition}`,
        );
      }
    } else if (isDistributed(from) && to.kind === 'local') {
      violations.push(
        `${key.table}: foreign key ${key.name} references ${key.referenced}, which stays local on the coordinator: ${key.definition}`,
      );
    } else if (!isDistributed(from) && isDistributed(to)) {
      violations.push(
        `${key.table}: foreign key ${key.name} from a global table to the distributed ${key.referenced}: ${key.definition}`,
      );
    }
    if (fromColumn && key.columns.includes(fromColumn) && (key.on_delete === 'n' || key.on_delete === 'd')) {
      violations.push(
        `${key.table}: foreign key ${key.name} includes the distribution column ${fromColumn} and sets columns on delete: ${key.definition}`,
      );
    }
  }

  const { rows: triggers } = await db.query<{ table: string; name: string }>(
    `SELECT t.relname AS table, g.tgname AS name FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid
      WHERE t.relnamespace = 'public'::regnamespace AND NOT g.tgisinternal ORDER BY 1, 2`,
  );
  for (const trigger of triggers) {
    const found = classOf(trigger.table);
    if (found && isDistributed(found))
      violations.push(`${trigger.table}: trigger ${trigger.name} on a distributed table`);
  }

  const { rows: identities } = await db.query<{ table: string; column: string }>(
    `SELECT t.relname AS table, a.attname AS column FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid
      WHERE t.relnamespace = 'public'::regnamespace AND a.attidentity <> '' AND NOT a.attisdropped ORDER BY 1, 2`,
  );
  for (const identity of identities) {
    const found = classOf(identity.table);
    if (found && isDistributed(found))
      violations.push(
        `${identity.table}: identity column ${identity.column} on a distributed table (a sequence default is what Citus takes)`,
      );
  }

  // The distribution column is where a row's node is decided: never NULL.
  const { rows: columns } = await db.query<{ table: string; column: string; not_null: boolean }>(
    `SELECT t.relname AS table, a.attname AS column, a.attnotnull AS not_null
       FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid
      WHERE t.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped`,
  );
  for (const table of present) {
    const found = classOf(table);
    if (!found || !isDistributed(found)) continue;
    const column = columns.find((row) => row.table === table && row.column === found.column);
    if (!column) violations.push(`${table}: has no column ${found.column} to be distributed by`);
    else if (!column.not_null) violations.push(`${table}: its distribution column ${found.column} may be NULL`);
  }
  return violations;
}

test('every table of the migrated schema keeps the rules of its class (src/db/distribution.ts)', async () => {
  assert.deepEqual(await distributionViolations(database.db), []);
});

test('the check sees a violation of each kind (planted in a transaction rolled back)', async () => {
  // Planted on the real tables, in a transaction that the thrown `rolledBack` undoes.
  const rolledBack = new Error('rolled back');
  const planted = database.db.transaction(async (tx) => {
    await tx.query('ALTER TABLE teams ADD COLUMN planted_code text');
    await tx.query('CREATE UNIQUE INDEX teams_planted_code_key ON teams (planted_code)');
    await tx.query('CREATE TABLE planted_unclassified (id text PRIMARY KEY)');
    await tx.query(`CREATE FUNCTION planted_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`);
    await tx.query(
      'CREATE TRIGGER planted_trigger BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION planted_trigger()',
    );
    await tx.query('ALTER TABLE invitations ADD COLUMN planted_member_id text');
    await tx.query(`ALTER TABLE invitations ADD CONSTRAINT planted_member_fkey FOREIGN KEY (organization_id, planted_member_id)
                      REFERENCES members (organization_id, id) ON DELETE SET NULL`);
    await tx.query('ALTER TABLE api_keys ADD COLUMN planted_team_id text');
    await tx.query('CREATE UNIQUE INDEX teams_planted_id_key ON teams (id)');
    await tx.query(
      'ALTER TABLE api_keys ADD CONSTRAINT planted_team_fkey FOREIGN KEY (planted_team_id) REFERENCES teams (id)',
    );
    const violations = await distributionViolations(tx);
    const expect = [
      /^teams: unique index teams_planted_code_key does not start with the distribution column organization_id/,
      /^planted_unclassified: in no class/,
      /^api_keys: trigger planted_trigger on a distributed table/,
      /^invitations: foreign key planted_member_fkey includes the distribution column organization_id and sets columns on delete/,
      /^api_keys: foreign key planted_team_fkey to teams does not pair the distribution columns/,
    ];
    for (const pattern of expect)
      assert.ok(
        violations.some((line) => pattern.test(line)),
        `${pattern} in:\n${violations.join('\n')}`,
      );
    throw rolledBack;
  });
  await assert.rejects(planted, (error) => error === rolledBack);
});
