// Every source file stays short enough to read in one sitting: past the limit a file holds more than
// one job and wants splitting by role (as config.ts, scim/server.ts and the others were). The files are
// the ones git tracks, so a generated or ignored file is not counted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 400;
const root = fileURLToPath(new URL('../../', import.meta.url));
const folders = ['src', 'console/src', 'shared', 'scripts'];

/** The tracked .ts and .tsx files of the folders (git's `*` matches across directories). */
function trackedSources(): string[] {
  const pathspecs = folders.flatMap((folder) => [`${folder}/*.ts`, `${folder}/*.tsx`]);
  const listed = spawnSync('git', ['ls-files', '-z', '--', ...pathspecs], { cwd: root, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  // A file deleted in the working tree but not yet in the index has nothing left to measure.
  return listed.stdout.split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
}

/** Lines as `wc -l` counts them, plus a last line that has no newline. */
function lineCount(text: string): number {
  const newlines = text.split('\n').length - 1;
  return text === '' || text.endsWith('\n') ? newlines : newlines + 1;
}

test(`no source file in ${folders.join(', ')} is over ${MAX_LINES} lines`, () => {
  const files = trackedSources();
  // An empty listing (git missing, a wrong path) would pass without measuring anything.
  assert.ok(files.includes('src/app.ts'), `git ls-files listed ${files.length} files, not src/app.ts among them`);
  const over = files
    .map((file) => ({ file, lines: lineCount(readFileSync(join(root, file), 'utf8')) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .sort((a, b) => b.lines - a.lines);
  assert.deepEqual(
    over.map(({ file, lines }) => `${file}: ${lines} lines`),
    [],
    `split these files by role, each under ${MAX_LINES} lines`,
  );
});
