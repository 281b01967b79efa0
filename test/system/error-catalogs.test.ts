// The error codes are written once, in the catalogs (src/http/error-codes.ts and each module's
// error-codes.ts): the served OpenAPI declares no code that is not in one, at a status its catalog gives
// it; every code of a catalog is documented in docs/api; and every operation of the document is named
// there by its operationId.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { ErrorCode } from '../../src/http/error-catalog.ts';
import { httpErrors } from '../../src/http/error-codes.ts';
import { useTenantApp } from '../support/harness.ts';

const root = join(import.meta.dirname, '..', '..');

/** Every catalog: the shared one and each module's, by the file it is in. */
async function catalogs(): Promise<Map<string, ErrorCode[]>> {
  const found = new Map<string, ErrorCode[]>([['src/http/error-codes.ts', Object.values(httpErrors)]]);
  for (const module of readdirSync(join(root, 'src/modules'))) {
    const file = `src/modules/${module}/error-codes.ts`;
    if (!existsSync(join(root, file))) continue;
    const exports = (await import(join(root, file))) as Record<string, Record<string, ErrorCode>>;
    found.set(
      file,
      Object.values(exports).flatMap((catalog) => Object.values(catalog)),
    );
  }
  return found;
}

const docs = readdirSync(join(root, 'docs/api'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => readFileSync(join(root, 'docs/api', name), 'utf8'))
  .join('\n');

describe('the error catalogs', () => {
  const t = useTenantApp();
  let document: Record<string, any>;
  let byCode: Map<string, ErrorCode[]>;

  before(async () => {
    await t.ready;
    document = (await t.as().get('/openapi.json')).body;
    byCode = new Map();
    for (const entries of (await catalogs()).values()) {
      for (const entry of entries) byCode.set(entry.code, [...(byCode.get(entry.code) ?? []), entry]);
    }
  });

  /** Each error response in the API's error shape (the shared Error schema) and the codes it declares. */
  function declaredErrors(): { where: string; status: number; codes: string[] | undefined }[] {
    const found: { where: string; status: number; codes: string[] | undefined }[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
        for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
          if (Number(status) < 400) continue;
          for (const [type, media] of Object.entries<Record<string, any>>(response.content ?? {})) {
            const schema = media.schema ?? {};
            const shared =
              schema.allOf?.[0]?.$ref === '#/components/schemas/Error' || schema.$ref === '#/components/schemas/Error';
            const inline = schema.properties?.error && 'details' in (schema.properties ?? {});
            if (!shared && !inline) continue;
            const codes = schema.allOf?.[1]?.properties?.error?.enum ?? schema.properties?.error?.enum;
            found.push({ where: `${method.toUpperCase()} ${path} ${status} ${type}`, status: Number(status), codes });
          }
        }
      }
    }
    return found;
  }

  test('every error response in the error shape declares its codes', () => {
    assert.deepEqual(
      declaredErrors()
        .filter(({ codes }) => !codes || codes.length === 0)
        .map(({ where }) => where),
      [],
    );
  });

  test('every code the OpenAPI declares is in a catalog, answered there with that status', () => {
    const strays: string[] = [];
    for (const { where, status, codes } of declaredErrors()) {
      for (const code of codes ?? []) {
        const entries = byCode.get(code);
        if (!entries) strays.push(`${where}: ${code} is in no catalog`);
        else if (!entries.some((entry) => entry.statuses.includes(status)))
          strays.push(
            `${where}: ${code} is answered with ${entries.flatMap((entry) => entry.statuses)} in its catalog`,
          );
      }
    }
    assert.deepEqual(strays, []);
  });

  test('every code of every catalog is documented in docs/api', async () => {
    const undocumented: string[] = [];
    for (const [file, entries] of await catalogs()) {
      for (const entry of entries) {
        if (!docs.includes(`\`${entry.code}\``)) undocumented.push(`${entry.code} (${file})`);
      }
    }
    assert.deepEqual(undocumented, []);
  });

  test('every operation of the OpenAPI is named in docs/api by its operationId', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
        if (!docs.includes(`\`${operation.operationId}\``))
          missing.push(`${operation.operationId} (${method.toUpperCase()} ${path})`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
