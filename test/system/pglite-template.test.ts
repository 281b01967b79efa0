import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { databaseOverPglite, openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteTemplateFiles } from '../../src/db/pglite-template.ts';

const schemaOf = async (db: Database) =>
  (
    await db.query<{ line: string }>(
      `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
       FROM information_schema.columns WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
     UNION ALL
     SELECT tablename || ' index ' || indexdef FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
     ORDER BY 1`,
    )
  ).rows.map((row) => row.line);

test('a fresh embedded database comes from the migrated template: nothing left to migrate, and the same schema as migrating from scratch', async () => {
  const { migrated } = await pgliteTemplateFiles();
  // npm ci and npm test make it; a migration added since then is made here, as npm test would.
  if (!existsSync(migrated)) spawnSync(process.execPath, ['scripts/build-pglite-template.ts'], { stdio: 'inherit' });
  assert.ok(existsSync(migrated), 'the migrated template for the migrations present exists');
  const fromTemplate = await openDatabase({ pgliteDataDir: 'memory://' });
  const fromScratch = await databaseOverPglite(await PGlite.create('memory://'));
  try {
    assert.deepEqual(await migrate(fromTemplate), [], 'every migration was already applied in the template');
    assert.ok((await migrate(fromScratch)).length > 0);
    const templateSchema = await schemaOf(fromTemplate);
    assert.ok(templateSchema.some((line) => line.startsWith('sessions.token_hash')));
    assert.deepEqual(templateSchema, await schemaOf(fromScratch));
  } finally {
    await fromTemplate.close();
    await fromScratch.close();
  }
});
