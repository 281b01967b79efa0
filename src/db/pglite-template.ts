// Templates of the embedded database, made once at install time (scripts/build-pglite-template.ts), so a
// fresh DATA_DIR (and every PGlite test database) copies a ready cluster instead of running initdb and
// every migration: the migrated template when it was made from exactly the migrations present now,
// else the empty cluster (the start then migrates as usual).
import { readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { migrationsDigest } from './migration-files.ts';

const root = new URL('../../', import.meta.url);
const cacheDir = new URL('node_modules/.cache/orgplane/', root).pathname;

async function pgliteVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(new URL('node_modules/@electric-sql/pglite/package.json', root), 'utf8'));
  return manifest.version as string;
}

/** Named by PGlite version (and migrations), so an upgrade or a new migration never loads a stale one. */
export async function pgliteTemplateFiles(): Promise<{ cluster: string; migrated: string }> {
  const version = await pgliteVersion();
  return {
    cluster: path.join(cacheDir, `pglite-${version}.tar`),
    migrated: path.join(cacheDir, `pglite-${version}-migrations-${await migrationsDigest()}.tar`),
  };
}

/** The best template there is for the code as it is now, if any. */
export async function readPgliteTemplate(): Promise<Blob | undefined> {
  const files = await pgliteTemplateFiles().catch(() => undefined);
  if (!files) return undefined;
  for (const file of [files.migrated, files.cluster]) {
    const data = await readFile(file).catch(() => undefined);
    if (data) return new Blob([data]);
  }
  return undefined;
}

/** Removes migrated templates of other migration sets (left by earlier installs). */
export async function removeOtherMigratedTemplates(keep: string): Promise<void> {
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  await Promise.all(
    names
      // Not a file another build is still writing (`<name>.<pid>.tmp`): it renames it into place itself.
      .filter((name) => name.includes('-migrations-') && !name.endsWith('.tmp') && path.join(cacheDir, name) !== keep)
      .map((name) => unlink(path.join(cacheDir, name)).catch(() => {})),
  );
}
