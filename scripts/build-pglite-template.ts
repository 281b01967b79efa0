// Runs at `npm install`/`npm ci` (postinstall), and from the test runner when the migrations changed:
// saves an initialized empty cluster and the same cluster with every migration applied
// (src/db/pglite-template.ts says how they are used). Failure only costs start-up speed, so it
// never fails the install.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { databaseOverPglite } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { pgliteTemplateFiles, removeOtherMigratedTemplates } from '../src/db/pglite-template.ts';

async function save(file: string, dump: Blob) {
  await mkdir(path.dirname(file), { recursive: true });
  // A name of this process's own: two builders at once each rename a whole file into place.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, file);
}

try {
  const files = await pgliteTemplateFiles();
  const lite = await PGlite.create('memory://');
  await save(files.cluster, await lite.dumpDataDir('none'));
  const db = await databaseOverPglite(lite);
  try {
    await migrate(db);
    await save(files.migrated, await lite.dumpDataDir('none'));
  } finally {
    await db.close();
  }
  await removeOtherMigratedTemplates(files.migrated);
  console.log(
    `orgplane: embedded database templates written (${path.basename(files.cluster)}, ${path.basename(files.migrated)})`,
  );
} catch (error) {
  console.warn(
    `orgplane: no embedded database template (${error instanceof Error ? error.message : error}); first starts will run initdb`,
  );
}
