// Every operation of the served OpenAPI names what it requires (`x-permission`): a key of the permission
// catalog, or who else may call it (public, signed-in, member, owner, instance-admin). An operation that
// declares nothing fails here, so a new route is born with its key. The catalog's `sensitive` flag is held
// to the operations: a write that needs a sensitive key needs a recent authentication, and a privileged
// write names a sensitive key (or is a person's own, or the owner's or an instance administrator's).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { FRESH_AUTHENTICATION } from '../../src/http/auth.ts';
import {
  isPermissionKey,
  PERMISSION_EXTENSION,
  PERMISSION_KEYS,
  PERMISSIONS,
  type PermissionKey,
  type Requirement,
} from '../../src/platform/permissions.ts';
import { useTenantApp } from '../support/harness.ts';

const accesses = new Set<string>(['public', 'signed-in', 'member', 'owner', 'instance-admin']);
const writeMethods = new Set(['post', 'put', 'patch', 'delete']);

/**
 * Writes that anyone holding their key may make for themselves, privileged only for the calls that take
 * a second, sensitive key (judged by the service): the operation carries the mark for those calls.
 */
const privilegedThroughAnotherKey: Record<string, PermissionKey> = {
  authorizeMcpConnection: 'mcp_connections.manage',
  disconnectMcpConnection: 'mcp_connections.manage',
  setMcpConnectionApiKey: 'mcp_connections.manage',
  createInstallLink: 'install_links.rotate',
  updateTeam: 'roles.manage',
};

/** Keys that no operation names because a service judges them inside a broader operation, with where. */
const keysJudgedInsideOperations: Record<string, string> = {
  'install_links.rotate': 'createInstallLink with rotate: true',
  'mcp_connections.view': 'also decides which connections listMcpConnections and getMcpConnection show',
};

describe('what each operation requires', () => {
  const t = useTenantApp({ tenant: false });
  let operations: { method: string; path: string; operationId: string; operation: Record<string, any> }[];

  before(async () => {
    const document = (await t.as().get('/openapi.json')).body as {
      paths: Record<string, Record<string, Record<string, any>>>;
    };
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({ method, path, operationId: operation.operationId as string, operation })),
    );
  });

  test('every operation declares a key of the catalog or an access', () => {
    const undeclared = operations
      .filter(({ operation }) => {
        const requirement = operation[PERMISSION_EXTENSION];
        return typeof requirement !== 'string' || !(isPermissionKey(requirement) || accesses.has(requirement));
      })
      .map(({ method, path, operationId }) => `${operationId} (${method.toUpperCase()} ${path})`);
    assert.deepEqual(undeclared, [], 'declare `requires` in authenticate(), or publicAccess on a route without it');
  });

  test('an operation with a credential names one; a public one needs none', () => {
    for (const { operationId, operation } of operations) {
      const requirement = operation[PERMISSION_EXTENSION] as Requirement;
      if (requirement !== 'public') {
        assert.ok(
          Array.isArray(operation.security) && operation.security.length > 0,
          `${operationId} requires ${requirement} but names no security scheme`,
        );
      }
    }
  });

  test('a write under a sensitive key needs a recent authentication', () => {
    const unguarded = operations
      .filter(({ method, operation }) => {
        const requirement = operation[PERMISSION_EXTENSION] as string;
        return (
          writeMethods.has(method) &&
          isPermissionKey(requirement) &&
          PERMISSIONS[requirement].sensitive &&
          !operation[FRESH_AUTHENTICATION]
        );
      })
      .map(({ operationId, operation }) => `${operationId} (${operation[PERMISSION_EXTENSION]})`);
    assert.deepEqual(unguarded, []);
  });

  test('a privileged write names a sensitive key, or is the caller’s own, the owner’s or an administrator’s', () => {
    const misnamed = operations
      .filter(({ method, operation, operationId }) => {
        const requirement = operation[PERMISSION_EXTENSION] as string;
        if (!writeMethods.has(method) || !operation[FRESH_AUTHENTICATION]) return false;
        const privilegedKey = privilegedThroughAnotherKey[operationId];
        if (privilegedKey) return !PERMISSIONS[privilegedKey].sensitive;
        if (isPermissionKey(requirement)) return !PERMISSIONS[requirement].sensitive;
        return !['signed-in', 'owner', 'instance-admin', 'member'].includes(requirement);
      })
      .map(({ operationId, operation }) => `${operationId} (${operation[PERMISSION_EXTENSION]})`);
    assert.deepEqual(misnamed, []);
  });

  test('every key of the catalog is required somewhere', () => {
    const named = new Set(operations.map(({ operation }) => operation[PERMISSION_EXTENSION] as string));
    const unused = PERMISSION_KEYS.filter((key) => !named.has(key) && !(key in keysJudgedInsideOperations));
    assert.deepEqual(unused, [], 'a key no operation requires grants nothing: remove it, or name where it is judged');
  });

  test('the operation’s description says what it requires', () => {
    for (const { operationId, operation } of operations) {
      const requirement = operation[PERMISSION_EXTENSION] as string;
      if (!isPermissionKey(requirement)) continue;
      assert.match(String(operation.description), new RegExp(requirement.replace('.', '\\.')), operationId);
    }
  });
});
