// A migrated database for the tests below the HTTP app (catalog checks, statement plans).
import { after, before } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openTestDatabase, type TestDatabase } from './app.ts';

/** For a test file: a fresh database with every migration applied, opened before its tests and dropped after. */
export function useMigratedDatabase(): { readonly db: Database } {
  let database: TestDatabase | undefined;
  before(async () => {
    database = await openTestDatabase({ migrated: true });
    // Nothing left to apply on a clone of the template; the call keeps this true without one.
    await migrate(database.db);
  });
  after(async () => {
    await database?.drop();
  });
  return {
    get db() {
      if (!database) throw new Error('the database opens in before(): use it inside a test or hook');
      return database.db;
    },
  };
}
