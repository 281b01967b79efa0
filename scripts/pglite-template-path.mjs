import { readFile } from 'node:fs/promises';

const root = new URL('../', import.meta.url);

/** Where the initialized-cluster template lives; named by PGlite version so an upgrade never loads a stale one. */
export async function pgliteTemplateFile() {
  const manifest = JSON.parse(await readFile(new URL('node_modules/@electric-sql/pglite/package.json', root), 'utf8'));
  return new URL(`node_modules/.cache/orgplane/pglite-${manifest.version}.tar`, root).pathname;
}
