// The boundary check of `npm test` (dependency-cruiser with .dependency-cruiser.mjs) really fails on a
// violation: it is run, with the project's own config, over a small src/ written into a temporary
// directory, once clean and once with each kind of violation planted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPlantedProject as check } from './planted-project.ts';

// A clean little project: a module using another through its index.ts, files of one module using each
// other (one way: no-circular forbids a circle even within a module), the foundation using the foundation.
const clean: Record<string, string> = {
  'src/platform/ids.ts': "export const newId = (): string => 'id';\n",
  'src/http/caller.ts': "import { newId } from '../platform/ids.ts';\nexport const callerId = newId();\n",
  'src/config.ts': 'export const port = 8080;\n',
  'src/modules/identity/store.ts': "import { newId } from '../../platform/ids.ts';\nexport const memberId = newId();\n",
  'src/modules/identity/index.ts': 'export interface MembershipCore { lockMember(id: string): Promise<void> }\n',
  'src/modules/memory/store.ts': "export const bank = 'bank';\n",
  'src/modules/memory/service.ts':
    "import type { MembershipCore } from '../identity/index.ts';\nimport { bank } from './store.ts';\n" +
    'export const use = (core: MembershipCore) => core.lockMember(bank);\n',
};

test('the check passes on modules that keep their boundaries', () => {
  const result = check(clean);
  assert.equal(result.status, 0, result.output);
  // Four: the type-only import is among them (types couple modules as much as values).
  assert.match(result.output, /no dependency violations found \(7 modules, 4 dependencies cruised\)/);
});

test("the check fails on a module importing another module's store", () => {
  const result = check({
    ...clean,
    'src/modules/memory/__planted_violation__.ts':
      "import { memberId } from '../identity/store.ts';\nexport const planted = memberId;\n",
  });
  assert.notEqual(result.status, 0, result.output);
  assert.match(
    result.output,
    /error module-through-its-index: src\/modules\/memory\/__planted_violation__\.ts → src\/modules\/identity\/store\.ts/,
  );
  assert.match(result.output, /1 dependency violations \(1 errors, 0 warnings\)/);
});

test('the check fails on config.ts importing from a module, a type-only import too', () => {
  const result = check({
    ...clean,
    'src/config.ts':
      "import type { MembershipCore } from './modules/identity/index.ts';\nexport type Core = MembershipCore;\n",
  });
  assert.notEqual(result.status, 0, result.output);
  assert.match(
    result.output,
    /error foundation-imports-no-module: src\/config\.ts → src\/modules\/identity\/index\.ts/,
  );
});

test('the check fails on two modules that use each other, even through their index.ts', () => {
  const result = check({
    ...clean,
    'src/modules/memory/index.ts': "export type Bank = 'bank';\n",
    'src/modules/identity/service.ts':
      "import type { Bank } from '../memory/index.ts';\nexport const bank: Bank = 'bank';\n",
  });
  assert.notEqual(result.status, 0, result.output);
  assert.match(
    result.output,
    /error no-circular-between-modules: src\/modules\/identity → \s*src\/modules\/memory →\s*src\/modules\/identity/,
  );
});
