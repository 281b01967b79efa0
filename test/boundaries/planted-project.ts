// The boundary checker (dependency-cruiser with the project's own .dependency-cruiser.mjs) run over a
// small project written into a temporary directory: the rule tests plant a violation in it and see it fail.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const config = fileURLToPath(new URL('../../.dependency-cruiser.mjs', import.meta.url));
const checker = fileURLToPath(
  new URL('../../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url),
);

/** Runs the checker over `src/` of a project made of `files` (path → text); its exit status and output. */
export function checkPlantedProject(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orgplane-boundaries-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const run = spawnSync(process.execPath, [checker, 'src', '--config', config], { cwd: dir, encoding: 'utf8' });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
