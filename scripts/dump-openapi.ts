// Prints the served /openapi.json with its keys sorted and the per-run server URL left out, so two
// versions of the code can be compared with diff: node_modules/.bin/node scripts/dump-openapi.ts > a.json
import { startTestApp } from '../test/support/app.ts';

const app = await startTestApp();
const document = (await (await fetch(`${app.url}/openapi.json`)).json()) as Record<string, unknown>;
delete document.servers;
const sorted = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sorted)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
        )
      : value;
process.stdout.write(`${JSON.stringify(sorted(document), null, 1)}\n`);
await app.close();
