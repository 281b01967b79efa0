// The rules of .dependency-cruiser.mjs for sub-modules (a folder inside a module, such as
// mcp-connections/oauth/), import circles between files and the layers of the foundation fail on a
// violation: the checker is run, with the project's own config, over a small src/ written into a
// temporary directory, once clean and once with each kind of violation planted (as
// dependency-rules.test.ts does for the rules between modules).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPlantedProject as check } from './planted-project.ts';

// A module with two sub-modules that keep their boundaries: the parent reaches each through its index.ts,
// one sub-module reaches the other through its index.ts, and takes from the parent only its contracts.ts;
// the composition root reaches a sub-module through its index.ts.
const clean: Record<string, string> = {
  'src/platform/ids.ts': "export const newId = (): string => 'id';\n",
  'src/modules/conn/contracts.ts': 'export interface Row { id: string }\n',
  'src/modules/conn/store.ts':
    "import type { Row } from './contracts.ts';\nimport { newId } from '../../platform/ids.ts';\n" +
    'export const find = (): Row => ({ id: newId() });\n',
  'src/modules/conn/probe/run.ts': 'export const run = (url: string): boolean => url.length > 0;\n',
  'src/modules/conn/probe/index.ts': "export { run as probe } from './run.ts';\n",
  'src/modules/conn/oauth/flow.ts':
    "import type { Row } from '../contracts.ts';\nimport { probe } from '../probe/index.ts';\n" +
    'export const test = (row: Row): boolean => probe(row.id);\n',
  'src/modules/conn/oauth/index.ts': "export { test } from './flow.ts';\n",
  'src/modules/conn/index.ts':
    "import { test } from './oauth/index.ts';\nimport { find } from './store.ts';\nexport const check = () => test(find());\n",
  'src/cli.ts':
    "import { check } from './modules/conn/index.ts';\nimport { probe } from './modules/conn/probe/index.ts';\n" +
    "export const main = () => check() && probe('x');\n",
};

function assertOneViolation(files: Record<string, string>, violation: RegExp): void {
  const result = check(files);
  assert.notEqual(result.status, 0, result.output);
  assert.match(result.output, violation);
  assert.match(result.output, /1 dependency violations \(1 errors, 0 warnings\)/);
}

test('the check passes on sub-modules that keep their boundaries', () => {
  const result = check(clean);
  assert.equal(result.status, 0, result.output);
  assert.match(result.output, /no dependency violations found \(9 modules, 10 dependencies cruised\)/);
});

test("the check fails on a module's file importing a sub-module's file other than its index.ts", () => {
  assertOneViolation(
    { ...clean, 'src/modules/conn/view.ts': "import { test } from './oauth/flow.ts';\nexport const view = test;\n" },
    /error sub-module-through-its-index: src\/modules\/conn\/view\.ts → src\/modules\/conn\/oauth\/flow\.ts/,
  );
});

test("the check fails on a sub-module importing a sibling sub-module's file other than its index.ts", () => {
  assertOneViolation(
    {
      ...clean,
      'src/modules/conn/oauth/health.ts': "import { run } from '../probe/run.ts';\nexport const health = run;\n",
    },
    /error sub-module-through-its-index: src\/modules\/conn\/oauth\/health\.ts → src\/modules\/conn\/probe\/run\.ts/,
  );
});

test("the check fails on the composition root importing a sub-module's file other than its index.ts", () => {
  assertOneViolation(
    { ...clean, 'src/app.ts': "import { run } from './modules/conn/probe/run.ts';\nexport const app = run;\n" },
    /error sub-module-through-its-index-from-outside: src\/app\.ts → src\/modules\/conn\/probe\/run\.ts/,
  );
});

test("the check fails on a sub-module importing its parent's store, a type-only import too", () => {
  assertOneViolation(
    {
      ...clean,
      'src/modules/conn/oauth/guards.ts':
        "import type { find } from '../store.ts';\nexport type Found = ReturnType<typeof find>;\n",
    },
    /error sub-module-uses-parent-contracts-only: src\/modules\/conn\/oauth\/guards\.ts → src\/modules\/conn\/store\.ts/,
  );
});

test("the check fails on another module importing a sub-module's index.ts", () => {
  assertOneViolation(
    {
      ...clean,
      'src/modules/audit/service.ts': "import { probe } from '../conn/probe/index.ts';\nexport const audit = probe;\n",
    },
    /error module-through-its-index: src\/modules\/audit\/service\.ts → src\/modules\/conn\/probe\/index\.ts/,
  );
});

test('the check fails on two files of one module that import each other, type-only imports too', () => {
  const result = check({
    ...clean,
    'src/modules/conn/store.ts':
      "import type { check } from './index.ts';\nexport type Check = typeof check;\nexport const find = () => ({ id: 'x' });\n",
  });
  assert.notEqual(result.status, 0, result.output);
  assert.match(
    result.output,
    /error no-circular: src\/modules\/conn\/index\.ts → \s*src\/modules\/conn\/store\.ts →\s*src\/modules\/conn\/index\.ts/,
  );
});

test('the check fails on an import circle around a loop of three files', () => {
  const result = check({
    ...clean,
    'src/db/database.ts': "import { digest } from './template.ts';\nexport const open = () => digest;\n",
    'src/db/template.ts': "import { files } from './migrate.ts';\nexport const digest = files;\n",
    'src/db/migrate.ts':
      "import type { open } from './database.ts';\nexport const files: string[] = [];\nexport type Open = typeof open;\n",
  });
  assert.notEqual(result.status, 0, result.output);
  assert.match(
    result.output,
    /error no-circular: src\/db\/database\.ts → \s*src\/db\/template\.ts →\s*src\/db\/migrate\.ts →\s*src\/db\/database\.ts/,
  );
});

test('the check fails on platform/ importing from http/, a type-only import too', () => {
  assertOneViolation(
    {
      ...clean,
      'src/http/caller.ts': 'export interface Caller { userId: string }\n',
      'src/platform/write-context.ts':
        "import type { Caller } from '../http/caller.ts';\nexport type Actor = Caller;\n",
    },
    /error foundation-imports-downward: src\/platform\/write-context\.ts → src\/http\/caller\.ts/,
  );
});

test('the check fails on db/ importing from platform/', () => {
  assertOneViolation(
    { ...clean, 'src/db/locks.ts': "import { newId } from '../platform/ids.ts';\nexport const lockId = newId();\n" },
    /error db-imports-no-platform: src\/db\/locks\.ts → src\/platform\/ids\.ts/,
  );
});
