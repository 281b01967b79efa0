// The SCIM protocol pieces on their own: filter parsing/evaluation, PATCH as IdPs send it,
// normalization, error bodies, discovery documents and paging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter, parsePatchPath, matchesFilter } from '../../src/modules/scim/filter.ts';
import { applyPatch } from '../../src/modules/scim/patch.ts';
import { normalizeResource, pickEmail, pickName } from '../../src/modules/scim/resource.ts';
import { ScimError, scimErrorBody } from '../../src/modules/scim/errors.ts';
import {
  listResponse,
  parsePaging,
  resourceTypeDocuments,
  serviceProviderConfig,
  schemaDocument,
  allSchemas,
} from '../../src/modules/scim/documents.ts';
import { ENTERPRISE_USER_SCHEMA, USER_SCHEMA } from '../../src/modules/scim/schema.ts';

const scimError = (fn: () => unknown, scimType: string) =>
  assert.throws(
    fn,
    (error: unknown) => error instanceof ScimError && error.status === 400 && error.scimType === scimType,
  );

test('filter: eq with a string, case-insensitive operators, URN-qualified attribute', () => {
  assert.deepEqual(parseFilter('userName eq "Ann@Example.com"'), {
    type: 'compare',
    attr: { name: 'userName' },
    op: 'eq',
    value: 'Ann@Example.com',
  });
  assert.deepEqual(parseFilter('userName EQ "a"'), parseFilter('userName eq "a"'));
  assert.deepEqual(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"'), {
    type: 'compare',
    attr: { uri: USER_SCHEMA, name: 'userName' },
    op: 'eq',
    value: 'a',
  });
  assert.deepEqual(parseFilter('emails.value eq "x@y.z"'), {
    type: 'compare',
    attr: { name: 'emails', sub: 'value' },
    op: 'eq',
    value: 'x@y.z',
  });
});

test('filter: and binds tighter than or; parentheses and not', () => {
  const f = parseFilter('externalId eq "1" or userName eq "a" and displayName eq "b"');
  assert.equal(f.type, 'or');
  assert.equal((f as any).right.type, 'and');
  const g = parseFilter('(externalId eq "1" or userName eq "a") and displayName eq "b"');
  assert.equal(g.type, 'and');
  assert.equal((g as any).left.type, 'or');
  assert.equal(parseFilter('not (active eq false)').type, 'not');
});

test('filter: literals, escapes and presence', () => {
  assert.equal((parseFilter('active eq true') as any).value, true);
  assert.equal((parseFilter('active eq False') as any).value, false);
  assert.equal((parseFilter('x eq null') as any).value, null);
  assert.equal((parseFilter('x gt 10') as any).value, 10);
  assert.equal(
    (parseFilter('displayName eq "say \\"hi\\" (now) and [then]"') as any).value,
    'say "hi" (now) and [then]',
  );
  assert.deepEqual(parseFilter('title pr'), { type: 'present', attr: { name: 'title' } });
});

test('filter: value paths', () => {
  const f = parseFilter('emails[type eq "work" and value co "@example.com"]');
  assert.equal(f.type, 'valuePath');
  assert.ok(
    matchesFilter(
      {
        emails: [
          { type: 'home', value: 'a@other.org' },
          { type: 'work', value: 'a@Example.com' },
        ],
      },
      f,
    ),
  );
  assert.ok(!matchesFilter({ emails: [{ type: 'home', value: 'a@example.com' }] }, f));
});

test('filter: malformed input is invalidFilter, never a crash', () => {
  for (const bad of [
    '',
    'userName',
    'userName eq',
    'userName eq unquoted',
    'userName like "a"',
    '(userName eq "a"',
    'userName eq "a")',
    'userName eq "a" and',
    '"a" eq userName',
    'userName eq "unterminated',
    'emails[type eq "work"',
    '1bad eq "a"',
    'not userName eq "a"',
    `${'('.repeat(100)}a eq "b"${')'.repeat(100)}`,
    'x'.repeat(5000),
  ]) {
    scimError(() => parseFilter(bad), 'invalidFilter');
  }
});

test('filter evaluation: userName case-insensitive, externalId case-exact, multi-valued any-match', () => {
  const user = {
    userName: 'Ann@Example.com',
    externalId: 'AbC',
    emails: [{ value: 'ann@example.com' }, { value: 'ann@home.org' }],
    displayName: 'Ann',
  };
  assert.ok(matchesFilter(user, parseFilter('userName eq "ann@example.COM"')));
  assert.ok(matchesFilter(user, parseFilter('externalId eq "AbC"')));
  assert.ok(!matchesFilter(user, parseFilter('externalId eq "abc"')));
  assert.ok(matchesFilter(user, parseFilter('emails.value eq "ann@home.org"')));
  assert.ok(matchesFilter(user, parseFilter('displayName sw "A" and not (displayName eq "Bob")')));
  assert.ok(!matchesFilter(user, parseFilter('title pr')));
});

test('patch paths', () => {
  assert.deepEqual(parsePatchPath('name.givenName'), { attr: { name: 'name', sub: 'givenName' } });
  const p = parsePatchPath('emails[type eq "work"].value');
  assert.equal(p.attr.name, 'emails');
  assert.equal(p.subAfterFilter, 'value');
  assert.deepEqual(parsePatchPath(`${ENTERPRISE_USER_SCHEMA}:manager`).attr, {
    uri: ENTERPRISE_USER_SCHEMA,
    name: 'manager',
  });
  assert.deepEqual(parsePatchPath('members[value eq "usr_1"]').filter, {
    type: 'compare',
    attr: { name: 'value' },
    op: 'eq',
    value: 'usr_1',
  });
  for (const bad of ['emails[type eq "work"]value', 'a b', 'emails]', 'emails[type eq]'])
    scimError(() => parsePatchPath(bad), 'invalidPath');
});

const baseUser = () => ({
  schemas: [USER_SCHEMA],
  userName: 'ann@example.com',
  active: true,
  name: { givenName: 'Ann', familyName: 'Lee' },
  emails: [{ value: 'ann@example.com', type: 'work', primary: true }],
});

test('patch: Okta deactivation (path-less replace with a value object)', () => {
  const result = applyPatch('User', baseUser(), [{ op: 'replace', value: { active: false } }]);
  assert.equal(result.active, false);
  assert.equal(result.userName, 'ann@example.com');
});

test('patch: Entra ID sequence (capitalised ops, "False" strings, filtered paths, extension attributes)', () => {
  const result = normalizeResource(
    'User',
    applyPatch('User', baseUser(), [
      { op: 'Replace', path: 'active', value: 'False' },
      { op: 'Add', path: 'emails[type eq "home"].value', value: 'ann@home.org' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ann.lee@example.com' },
      { op: 'Replace', path: 'name.givenName', value: 'Anne' },
      { op: 'Add', path: `${ENTERPRISE_USER_SCHEMA}:department`, value: 'R&D' },
      { op: 'Add', path: `${ENTERPRISE_USER_SCHEMA}:manager`, value: 'mgr-1' },
      { op: 'Replace', path: 'displayName', value: 'Anne Lee' },
    ]),
  );
  assert.equal(result.active, false);
  assert.deepEqual(result.emails, [
    { value: 'ann.lee@example.com', type: 'work', primary: true },
    { type: 'home', value: 'ann@home.org' },
  ]);
  assert.deepEqual(result.name, { givenName: 'Anne', familyName: 'Lee' });
  assert.deepEqual(result[ENTERPRISE_USER_SCHEMA], { department: 'R&D', manager: { value: 'mgr-1' } });
  assert.deepEqual(result.schemas, [USER_SCHEMA, ENTERPRISE_USER_SCHEMA]);
  assert.equal(result.displayName, 'Anne Lee');
});

test('patch: attribute names are case-insensitive and keep their canonical spelling', () => {
  const result = applyPatch('User', baseUser(), [
    { op: 'replace', path: 'USERNAME', value: 'ann2@example.com' },
    { op: 'replace', value: { DisplayName: 'A', 'name.FAMILYNAME': 'Li' } },
  ]);
  assert.equal(result.userName, 'ann2@example.com');
  assert.equal(result.displayName, 'A');
  assert.deepEqual(result.name, { givenName: 'Ann', familyName: 'Li' });
  assert.ok(!('USERNAME' in result));
});

test('patch: path-less value keyed by schema URN', () => {
  const result = applyPatch('User', baseUser(), [
    {
      op: 'replace',
      value: { [ENTERPRISE_USER_SCHEMA]: { employeeNumber: '42' }, [`${ENTERPRISE_USER_SCHEMA}:costCenter`]: 'cc' },
    },
  ]);
  assert.deepEqual(result[ENTERPRISE_USER_SCHEMA], { employeeNumber: '42', costCenter: 'cc' });
});

test('patch: read-only id in a path-less value is ignored (Okta echoes it), but an explicit path to it is refused', () => {
  const group = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
    id: 'grp_1',
    displayName: 'Eng',
    members: [],
  };
  const result = applyPatch('Group', group, [{ op: 'replace', value: { id: 'grp_1', displayName: 'Engineering' } }]);
  assert.equal(result.displayName, 'Engineering');
  assert.equal(result.id, 'grp_1');
  scimError(() => applyPatch('Group', group, [{ op: 'replace', path: 'id', value: 'x' }]), 'mutability');
});

test('patch: group members add (no duplicates), Okta filtered remove, Entra value remove, replace', () => {
  const group = { displayName: 'Eng', members: [{ value: 'u1' }] };
  let g = applyPatch('Group', group, [
    { op: 'Add', path: 'members', value: [{ value: 'u1' }, { value: 'u2' }, { value: 'u3' }] },
  ]);
  assert.deepEqual(g.members, [{ value: 'u1' }, { value: 'u2' }, { value: 'u3' }]);
  g = applyPatch('Group', g, [{ op: 'remove', path: 'members[value eq "u2"]' }]);
  assert.deepEqual(g.members, [{ value: 'u1' }, { value: 'u3' }]);
  g = applyPatch('Group', g, [{ op: 'Remove', path: 'members', value: [{ value: 'u1' }] }]);
  assert.deepEqual(g.members, [{ value: 'u3' }]);
  g = applyPatch('Group', g, [{ op: 'replace', path: 'members', value: [{ value: 'u9' }] }]);
  assert.deepEqual(g.members, [{ value: 'u9' }]);
  g = applyPatch('Group', g, [{ op: 'remove', path: 'members' }]);
  assert.equal(g.members, undefined);
  // removing a member that is not there is not an error
  assert.deepEqual(applyPatch('Group', group, [{ op: 'remove', path: 'members[value eq "nobody"]' }]).members, [
    { value: 'u1' },
  ]);
});

test('patch: a new primary email clears the old primary flag', () => {
  const result = applyPatch('User', baseUser(), [
    { op: 'add', path: 'emails', value: [{ value: 'b@example.com', type: 'other', primary: true }] },
  ]);
  assert.deepEqual(
    (result.emails as any[]).map((e) => [e.value, e.primary]),
    [
      ['ann@example.com', false],
      ['b@example.com', true],
    ],
  );
});

test('patch: errors are SCIM errors', () => {
  scimError(() => applyPatch('User', baseUser(), [{ op: 'move', path: 'x', value: 1 }]), 'invalidSyntax');
  scimError(() => applyPatch('User', baseUser(), [{ op: 'remove' }]), 'noTarget');
  scimError(() => applyPatch('User', baseUser(), [{ op: 'replace', value: 'x' }]), 'invalidValue');
  scimError(
    () => applyPatch('User', baseUser(), [{ op: 'replace', path: 'emails[value co "zzz"].value', value: 'y' }]),
    'noTarget',
  );
  scimError(
    () => applyPatch('User', baseUser(), [{ op: 'replace', path: 'urn:example:unknown:attr', value: 'y' }]),
    'invalidPath',
  );
  scimError(
    () => applyPatch('User', baseUser(), [{ op: 'replace', path: 'userName[type eq "x"]', value: 'y' }]),
    'invalidPath',
  );
  scimError(() => applyPatch('User', baseUser(), [{ op: 'add', path: 'title' }]), 'invalidValue');
  // the input document is not modified
  const user = baseUser();
  applyPatch('User', user, [{ op: 'replace', path: 'active', value: false }]);
  assert.equal(user.active, true);
});

test('normalizeResource: canonical names, booleans; server-owned, write-only and unknown attributes dropped', () => {
  const result = normalizeResource('User', {
    schemas: ['whatever'],
    id: 'client-chosen',
    meta: { created: 'x' },
    USERNAME: 'a@example.com',
    Active: 'True',
    password: 'hunter2',
    groups: [{ value: 'g' }],
    emails: [{ Value: 'a@example.com', Primary: 'true' }],
    [ENTERPRISE_USER_SCHEMA.toLowerCase()]: { Department: 'D' },
    nickName: null,
    customThing: 1,
  });
  assert.deepEqual(result, {
    schemas: [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
    userName: 'a@example.com',
    active: true,
    emails: [{ value: 'a@example.com', primary: true }],
    [ENTERPRISE_USER_SCHEMA]: { department: 'D' },
  });
  scimError(() => normalizeResource('User', { userName: 'a', active: 'maybe' }), 'invalidValue');
  scimError(() => normalizeResource('User', []), 'invalidSyntax');
});

test('pickEmail and pickName', () => {
  assert.equal(
    pickEmail({
      userName: 'x',
      emails: [
        { value: 'Home@x.org', type: 'home' },
        { value: 'Work@x.org', type: 'work' },
      ],
    }),
    'work@x.org',
  );
  assert.equal(
    pickEmail({
      userName: 'x',
      emails: [
        { value: 'a@x.org', type: 'work' },
        { value: 'p@x.org', primary: true },
      ],
    }),
    'p@x.org',
  );
  assert.equal(pickEmail({ userName: 'Ann@Example.com' }), 'ann@example.com');
  assert.equal(pickEmail({ userName: 'ann' }), null);
  assert.equal(pickName({ displayName: ' Ann Lee ' }), 'Ann Lee');
  assert.equal(pickName({ name: { givenName: 'Ann', familyName: 'Lee' } }), 'Ann Lee');
  assert.equal(pickName({}), null);
});

test('error body: SCIM schema, status as a string, scimType', () => {
  assert.deepEqual(scimErrorBody(409, 'userName is taken', 'uniqueness'), {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
    status: '409',
    scimType: 'uniqueness',
    detail: 'userName is taken',
  });
  assert.deepEqual(scimErrorBody(404), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
});

test('discovery documents', () => {
  const spc = serviceProviderConfig('https://h/scim/v2');
  assert.equal(spc.patch.supported, true);
  assert.equal(spc.bulk.supported, false);
  assert.equal(spc.filter.supported, true);
  assert.equal(spc.authenticationSchemes[0]!.type, 'oauthbearertoken');
  const types = resourceTypeDocuments('https://h/scim/v2');
  assert.deepEqual(
    types.map((t) => [t.id, t.endpoint, t.schema]),
    [
      ['User', '/Users', USER_SCHEMA],
      ['Group', '/Groups', 'urn:ietf:params:scim:schemas:core:2.0:Group'],
    ],
  );
  const userDoc = schemaDocument(allSchemas[0]!, 'https://h/scim/v2');
  assert.equal(userDoc.id, USER_SCHEMA);
  const userName = userDoc.attributes.find((a) => a.name === 'userName')!;
  assert.equal(userName.uniqueness, 'server');
  assert.equal(userName.required, true);
  assert.equal(userDoc.attributes.find((a) => a.name === 'password')!.returned, 'never');
});

test('paging: 1-based startIndex, count clamps, numeric fields', () => {
  assert.deepEqual(parsePaging({}), { startIndex: 1, count: 100 });
  assert.deepEqual(parsePaging({ startIndex: '0', count: '-5' }), { startIndex: 1, count: 0 });
  assert.deepEqual(parsePaging({ startIndex: '11', count: '10000' }), { startIndex: 11, count: 200 });
  scimError(() => parsePaging({ count: 'ten' }), 'invalidValue');
  scimError(() => parsePaging({ startIndex: '1.5' }), 'invalidValue');
  const page = listResponse([{ id: 'a' }], 7, { startIndex: 3, count: 1 });
  assert.deepEqual(page, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: 7,
    startIndex: 3,
    itemsPerPage: 1,
    Resources: [{ id: 'a' }],
  });
});
