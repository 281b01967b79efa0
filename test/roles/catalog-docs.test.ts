// docs/api/roles.md lists the permission catalog as the code defines it: every key with its
// description, whether it is sensitive and the built-in roles that hold it, and nothing else.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { PERMISSION_KEYS, PERMISSIONS } from '../../src/platform/permissions.ts';

test('the catalog in docs/api/roles.md is the one in src/platform/permissions.ts', () => {
  const page = readFileSync(new URL('../../docs/api/roles.md', import.meta.url), 'utf8');
  const rows = [...page.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| (.+) \| (yes|no) \| (.+) \|$/gm)].map((match) => ({
    key: match[1],
    description: match[2],
    sensitive: match[3] === 'yes',
    holders: match[4],
  }));
  assert.deepEqual(
    rows,
    PERMISSION_KEYS.map((key) => ({
      key,
      description: PERMISSIONS[key].description,
      sensitive: PERMISSIONS[key].sensitive,
      holders: ['owner', ...PERMISSIONS[key].defaultRoles].join(', '),
    })),
  );
});
