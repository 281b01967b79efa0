// Every action the server writes has words for the console's audit log (shared/audit-action-words.ts), and
// the table has no words for an action nothing writes any more. The actions are read from the source, where
// each write declares its action (`action: 'team.created'`, or one of two in a conditional); the coverage
// test (coverage.test.ts) checks the actions its operations really wrote as well.
import assert from 'node:assert/strict';
import { PERMISSION_KEYS } from '../../src/platform/permissions.ts';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { auditActionInWords, auditActionWords } from '../../shared/audit-action-words.ts';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return Promise.resolve(entry.name.endsWith('.ts') ? [path] : []);
    }),
  );
  return nested.flat();
}

/**
 * The actions the source declares: the quoted `area.verb` strings of every `action:` expression give the
 * areas, then every quoted string of one of those areas is an action (some reach `tx.audit` through a helper,
 * as the sign-in's `recordSignIn(ctx, 'user.sign_in_failed', ...)`); SQL's `u.id` names no area.
 */
async function declaredActions(): Promise<Set<string>> {
  const texts = await Promise.all((await sourceFiles('src')).map((file) => readFile(file, 'utf8')));
  const areas = new Set<string>();
  for (const text of texts)
    for (const [, expression] of text.matchAll(/\baction:\s*([^,\n}]+)/g))
      for (const [, area] of expression!.matchAll(/'([a-z_]+)\.[a-z_]+'/g)) areas.add(area!);
  const actions = new Set<string>();
  for (const text of texts)
    for (const [, area, verb] of text.matchAll(/'([a-z_]+)\.([a-z_]+)'/g))
      if (areas.has(area!)) actions.add(`${area}.${verb}`);
  // Keys of the permission catalog look alike (`organization.update`) and are not actions.
  for (const key of PERMISSION_KEYS) actions.delete(key);
  return actions;
}

test('every action the server writes has words, and every word names an action still written', async () => {
  const declared = await declaredActions();
  assert.ok(declared.size >= 60, `found ${declared.size} actions in the source`);
  for (const known of ['member.role_changed', 'organization.deleted', 'request.denied', 'user.sign_in_failed'])
    assert.ok(declared.has(known), `the scan finds ${known}`);
  const withoutWords = [...declared].filter((action) => !(action in auditActionWords)).sort();
  assert.deepEqual(withoutWords, [], 'actions with no words in shared/audit-action-words.ts');
  const stale = Object.keys(auditActionWords)
    .filter((action) => !declared.has(action))
    .sort();
  assert.deepEqual(stale, [], 'words for actions nothing writes');
});

test('words read as a phrase; an unknown action is shown as recorded', () => {
  assert.equal(auditActionInWords('member.role_changed'), 'changed the role of');
  assert.equal(auditActionInWords('future.thing'), 'future.thing');
  for (const [action, words] of Object.entries(auditActionWords)) {
    assert.match(words, /^[a-z]/, `${action}: words start in lower case, after the actor's name`);
    assert.doesNotMatch(words, /[._]/, `${action}: words, not the identifier`);
  }
});
