// Runs one benchmark by name (or lists them): npm run bench -- <name>
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync } from 'node:fs';

const benchDir = new URL('./', import.meta.url).pathname;
const names = readdirSync(benchDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${benchDir}${entry.name}/run.ts`))
  .map((entry) => entry.name)
  .sort();
const wanted = process.argv.slice(2);
if (wanted.length === 0) {
  console.log(`usage: npm run bench -- <name> [<name> ...]\nbenchmarks: ${names.join(', ')}`);
  process.exit(0);
}
for (const name of wanted) {
  if (!names.includes(name)) {
    console.error(`unknown benchmark "${name}"; known: ${names.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n### ${name}`);
  const run = spawnSync(process.execPath, [`${benchDir}${name}/run.ts`], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
