// The version of this orgplane, read from package.json: the one place it is written.
import { readFileSync } from 'node:fs';

export const packageVersion: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
