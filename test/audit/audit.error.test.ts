// Bad filters and cursors: 400 invalid_request with details naming the parameter; nothing is read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeCursor } from '../../src/http/schemas.ts';
import { useTenantApp } from '../support/harness.ts';

const t = useTenantApp();

test('bad filters, ranges and cursors are 400 with details', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1e2', 'limit'],
    ['outcome=maybe', 'outcome'],
    ['since=yesterday', 'since'],
    ['until=2026-02-30T00:00Z', 'until'],
    ['since=2026-01-01T00:00+01:00', 'since'],
    ['since=2026-02-01T00:00Z&until=2026-01-01T00:00Z', 'until'],
    ['action=Member.Role', 'action'],
    [`action=${'a'.repeat(101)}`, 'action'],
    ['actor=', 'actor'],
    [`target=${'x'.repeat(201)}`, 'target'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${encodeCursor({ before: -1 })}`, 'cursor'],
    [`cursor=${encodeCursor({ after: 'mem_x' })}`, 'cursor'],
    [`cursor=${encodeCursor({ before: 1.5 })}`, 'cursor'],
    [`cursor=${'A'.repeat(201)}`, 'cursor'],
  ];
  for (const [query, parameter] of cases) {
    const response = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events?${query}`);
    assert.equal(response.status, 400, query);
    assert.equal(response.body.error, 'invalid_request', query);
    assert.ok(
      response.body.details.some((detail: any) => detail.path.includes(parameter)),
      `${query}: ${response.text}`,
    );
  }
  for (const [query, parameter] of [
    ['format=xml', 'format'],
    ['since=soon', 'since'],
    ['since=2026-02-01T00:00Z&until=2026-01-01T00:00Z', 'until'],
  ] as const) {
    const response = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?${query}`);
    assert.equal(response.status, 400, query);
    assert.ok(
      response.body.details.some((detail: any) => detail.path.includes(parameter)),
      `${query}: ${response.text}`,
    );
  }
});

test('a cursor past the end gives an empty page, not an error', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const response = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events?cursor=${encodeCursor({ before: 1 })}`);
  assert.equal(response.status, 200);
  assert.deepEqual(response.body, { events: [], nextCursor: null });
});
