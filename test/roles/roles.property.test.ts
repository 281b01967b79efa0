// Random sequences of role, team and membership changes, made through the API by the owner and by a
// member who was given some keys, checked after every step against a model: each member holds exactly
// the keys their role and their teams' roles give (nobody holds a key nobody granted), a change made by
// someone without every key it gives is refused and changes nothing, and the owner holds every key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { builtInRoleKeys, isBuiltInRole, PERMISSION_KEYS, type PermissionKey } from '../../src/platform/permissions.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';

type Step =
  | { kind: 'createRole'; by: 'owner' | 'delegate'; keys: PermissionKey[] }
  | { kind: 'updateRole'; by: 'owner' | 'delegate'; role: number; keys: PermissionKey[] }
  | { kind: 'deleteRole'; role: number }
  | { kind: 'setMemberRole'; by: 'owner' | 'delegate'; member: number; role: number | 'admin' | 'member' }
  | { kind: 'setTeamRole'; by: 'owner' | 'delegate'; team: number; role: number | 'admin' | 'member' | null }
  | { kind: 'joinTeam'; member: number; team: number }
  | { kind: 'leaveTeam'; member: number; team: number };

const keys = fc.subarray([...PERMISSION_KEYS]);
const by = fc.constantFrom('owner' as const, 'delegate' as const);
const roleRef = fc.oneof(fc.nat({ max: 3 }), fc.constantFrom('admin' as const, 'member' as const));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('createRole' as const), by, keys }),
  fc.record({ kind: fc.constant('updateRole' as const), by, role: fc.nat({ max: 3 }), keys }),
  fc.record({ kind: fc.constant('deleteRole' as const), role: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('setMemberRole' as const), by, member: fc.nat({ max: 1 }), role: roleRef }),
  fc.record({
    kind: fc.constant('setTeamRole' as const),
    by,
    team: fc.nat({ max: 1 }),
    role: fc.oneof(roleRef, fc.constant(null)),
  }),
  fc.record({ kind: fc.constant('joinTeam' as const), member: fc.nat({ max: 1 }), team: fc.nat({ max: 1 }) }),
  fc.record({ kind: fc.constant('leaveTeam' as const), member: fc.nat({ max: 1 }), team: fc.nat({ max: 1 }) }),
);

describe('roles: no sequence of changes grants a key nobody gave', () => {
  const t = useTenantApp();

  it('random sequences of role, team and membership changes keep every member at what the model says', async () => {
    const orgPath = `/v1/orgs/${t.tenant.orgId}`;
    const owner = t.as(t.tenant.owner.token);
    // The delegate may change roles, members' roles and teams, but holds only what their own role gives.
    const delegateRole = await owner.post(`${orgPath}/roles`, {
      name: 'Delegate',
      permissions: ['roles.manage', 'members.update_role', 'teams.manage', 'teams.manage_members', 'audit.view'],
    });
    assert.equal(delegateRole.status, 201, delegateRole.text);
    const delegate = await signUp(t.app.url, 'delegate');
    await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, delegate, 'member');
    await owner.patch(`${orgPath}/members/${delegate.memberId}`, { role: delegateRole.body.role.id });
    const delegateKeys = new Set<PermissionKey>(delegateRole.body.role.permissions);
    let run = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        run += 1;
        const members: TestUser[] = [];
        for (const label of ['subject-a', 'subject-b']) {
          const user = await signUp(t.app.url, `${label}-${run}`);
          await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, user, 'member');
          members.push(user);
        }
        const teams: string[] = [];
        for (const name of ['one', 'two']) {
          teams.push((await owner.post(`${orgPath}/teams`, { name: `${name} ${run}` })).body.team.id);
        }
        // The model: each custom role's keys, each member's role, each team's role and members.
        const roles: { id: string; keys: Set<PermissionKey> }[] = [];
        const memberRole: string[] = ['member', 'member'];
        const teamRole: (string | null)[] = [null, null];
        const inTeam = [new Set<number>(), new Set<number>()];
        const keysOfRole = (role: string): Set<PermissionKey> =>
          isBuiltInRole(role) ? new Set(builtInRoleKeys(role)) : new Set(roles.find((r) => r.id === role)?.keys ?? []);
        const expected = (member: number): Set<PermissionKey> => {
          const held = keysOfRole(memberRole[member]!);
          for (const team of [0, 1])
            if (inTeam[team]!.has(member) && teamRole[team])
              for (const key of keysOfRole(teamRole[team]!)) held.add(key);
          return held;
        };
        const mayGive = (actor: 'owner' | 'delegate', given: Iterable<PermissionKey>) =>
          actor === 'owner' || [...given].every((key) => delegateKeys.has(key));
        const refName = (ref: number | 'admin' | 'member'): string | undefined =>
          typeof ref === 'number' ? roles[ref % Math.max(roles.length, 1)]?.id : ref;

        for (const action of steps) {
          const as = (actor: 'owner' | 'delegate') => t.as(actor === 'owner' ? t.tenant.owner.token : delegate.token);
          switch (action.kind) {
            case 'createRole': {
              const response = await as(action.by).post(`${orgPath}/roles`, {
                name: `r${run}-${roles.length}-${Math.random().toString(36).slice(2, 7)}`,
                permissions: action.keys,
              });
              const allowed = mayGive(action.by, action.keys);
              assert.equal(response.status, allowed ? 201 : 403, response.text);
              if (allowed) roles.push({ id: response.body.role.id, keys: new Set(action.keys) });
              break;
            }
            case 'updateRole': {
              const role = roles[action.role % Math.max(roles.length, 1)];
              if (!role) break;
              const response = await as(action.by).patch(`${orgPath}/roles/${role.id}`, { permissions: action.keys });
              const allowed = mayGive(action.by, action.keys) && mayGive(action.by, role.keys);
              assert.equal(response.status, allowed ? 200 : 403, response.text);
              if (allowed) role.keys = new Set(action.keys);
              break;
            }
            case 'deleteRole': {
              const role = roles[action.role % Math.max(roles.length, 1)];
              if (!role) break;
              const response = await owner.delete(`${orgPath}/roles/${role.id}`);
              const inUse = memberRole.includes(role.id) || teamRole.includes(role.id);
              // Another run's leftovers cannot use this run's roles; only this run's members and teams can.
              assert.equal(response.status, inUse ? 409 : 204, response.text);
              if (!inUse) roles.splice(roles.indexOf(role), 1);
              break;
            }
            case 'setMemberRole': {
              const role = refName(action.role);
              if (!role) break;
              const member = action.member;
              const response = await as(action.by).patch(`${orgPath}/members/${members[member]!.memberId}`, { role });
              const allowed =
                mayGive(action.by, keysOfRole(role)) && mayGive(action.by, keysOfRole(memberRole[member]!));
              assert.equal(response.status, allowed ? 200 : 403, response.text);
              if (allowed) memberRole[member] = role;
              break;
            }
            case 'setTeamRole': {
              const role = action.role === null ? null : refName(action.role);
              if (role === undefined) break;
              const response = await as(action.by).patch(`${orgPath}/teams/${teams[action.team]}`, { roleId: role });
              const before = teamRole[action.team];
              const allowed =
                role === before ||
                (mayGive(action.by, role ? keysOfRole(role) : []) &&
                  mayGive(action.by, before ? keysOfRole(before) : []));
              assert.equal(response.status, allowed ? 200 : 403, response.text);
              if (allowed) teamRole[action.team] = role;
              break;
            }
            case 'joinTeam': {
              const response = await owner.post(`${orgPath}/teams/${teams[action.team]}/members`, {
                memberId: members[action.member]!.memberId,
              });
              assert.equal(response.status, 204, response.text);
              inTeam[action.team]!.add(action.member);
              break;
            }
            case 'leaveTeam': {
              if (!inTeam[action.team]!.has(action.member)) break;
              const response = await owner.delete(
                `${orgPath}/teams/${teams[action.team]}/members/${members[action.member]!.memberId}`,
              );
              assert.equal(response.status, 204, response.text);
              inTeam[action.team]!.delete(action.member);
              break;
            }
          }
          for (const member of [0, 1]) {
            // What the member's own next request holds, read with their session.
            const mine = await t.as(members[member]!.token).get('/v1/me/permissions');
            assert.equal(mine.status, 200, mine.text);
            assert.deepEqual(
              new Set(mine.body.permissions.map((entry: { key: string }) => entry.key)),
              expected(member),
              `member ${member} after ${JSON.stringify(action)}`,
            );
          }
          const ownerKeys = await owner.get('/v1/me/permissions');
          assert.deepEqual(
            ownerKeys.body.permissions.map((entry: { key: string }) => entry.key).sort(),
            [...PERMISSION_KEYS].sort(),
          );
        }
        // Leave nothing this run made holding a role, so later runs' role deletions see only their own uses.
        for (const member of members) await owner.delete(`${orgPath}/members/${member.memberId}`);
        for (const team of teams) await owner.delete(`${orgPath}/teams/${team}`);
      }),
      { numRuns: 12, seed: Number(process.env.PROPERTY_SEED ?? Date.now() % 2 ** 31) },
    );
  });
});
