// Runs at `npm install`/`npm ci` (postinstall): initializes an empty embedded PostgreSQL cluster once
// and saves it, so that a server starting on an empty DATA_DIR (and every PGlite test database)
// copies it instead of running initdb (about 0.4 s instead of 2-3 s here). Plain JavaScript so it runs on
// whatever Node npm uses; failure only costs that speed, so it never fails the install.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { pgliteTemplateFile } from './pglite-template-path.mjs';

try {
  const { PGlite } = await import('@electric-sql/pglite');
  const file = await pgliteTemplateFile();
  const lite = await PGlite.create('memory://');
  const dump = await lite.dumpDataDir('none');
  await lite.close();
  await mkdir(new URL('.', `file://${file}`).pathname, { recursive: true });
  await writeFile(`${file}.tmp`, Buffer.from(await dump.arrayBuffer()));
  await rename(`${file}.tmp`, file);
  console.log(`orgplane: embedded database template written (${Math.round(dump.size / 1e6)} MB)`);
} catch (error) {
  console.warn(`orgplane: no embedded database template (${error?.message ?? error}); first starts will run initdb`);
}
