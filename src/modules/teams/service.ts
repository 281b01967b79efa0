// Teams of an organization and who is in them.
import { missingPermission } from '../../http/errors.ts';
import type { RoleGrants } from '../roles/index.ts';
import type { Database, Queryable } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { membershipRefusals, type MembershipAuthorization, identityErrors } from '../identity/index.ts';
import type { TeamDirectory, TeamRecord } from './contracts.ts';
import * as store from './store.ts';
import { teamErrors } from './error-codes.ts';

/** What other modules use of teams (TeamDirectory). */
/** The member's teams changed in `tx`: the membership core's copy of them follows (GET /v1/org reads it). */
const copyMemberTeams = (
  membership: Pick<MembershipAuthorization, 'setMemberTeams'>,
  tx: Queryable,
  organizationId: string,
  memberId: string,
) => membership.setMemberTeams(tx, organizationId, memberId, () => store.memberTeams(tx, organizationId, memberId));

export function createTeamDirectory(deps: {
  db: Database;
  membership: Pick<MembershipAuthorization, 'setMemberTeams'>;
}) {
  const { db, membership } = deps;
  return {
    /** Of `ids`, the ones that are teams of the organization. */
    listTeamIds: (organizationId: string, ids: string[], tx: Queryable = db) =>
      store.existingTeamIds(tx, organizationId, ids),
    async addMemberToTeams(tx: Queryable, organizationId: string, memberId: string, teamIds: string[]): Promise<void> {
      const teams = await store.existingTeamIds(tx, organizationId, teamIds);
      for (const teamId of teams) await store.addTeamMember(tx, organizationId, teamId, memberId);
      if (teams.length > 0) await copyMemberTeams(membership, tx, organizationId, memberId);
    },
  } satisfies TeamDirectory;
}

export interface TeamServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember' | 'lockMember' | 'setMemberTeams'>;
  /** Whether the caller may give (or take away) the team's role. */
  roleGrants: RoleGrants;
}

export function createTeamService(deps: TeamServiceDeps) {
  const { db, membership } = deps;

  /** The team's name (what its events record), or 404. */
  async function requireTeam(organizationId: string, teamId: string): Promise<string> {
    const team = await store.findTeam(db, organizationId, teamId);
    if (!team) throw teamErrors.team_not_found('No such team in this organization');
    return team.name;
  }

  return {
    async createTeam(ctx: CallerContext, organizationId: string, name: string): Promise<TeamRecord> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, 'teams.manage');
      const team = await writeTransaction(db, ctx, async (tx) => {
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: 'teams.manage',
          refuse: membershipRefusals(),
        });
        const created = await store.insertTeam(tx, { id: newId(idPrefixes.team), organizationId, name });
        if (created)
          tx.audit({
            action: 'team.created',
            organizationId,
            target: { type: 'team', id: created.id, name },
            changes: { name },
          });
        return created;
      });
      if (!team) throw teamErrors.team_exists('A team with this name already exists');
      return team;
    },

    async listTeams(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await membership.requireMembership(caller, organizationId);
      return store.listTeams(db, organizationId, page.limit, page.after);
    },

    async addTeamMember(
      ctx: CallerContext,
      organizationId: string,
      teamId: string,
      memberId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      await membership.requireMembership(ctx.actor, organizationId, 'teams.manage_members');
      requireFresh();
      const teamName = await requireTeam(organizationId, teamId);
      await writeTransaction(db, ctx, async (tx) => {
        // Held until the row is added: a removal committing meanwhile is waited for and seen here
        // (404), rather than met by the foreign key (a 500); one starting later waits and removes both.
        if (!(await membership.lockMember(tx, organizationId, memberId)))
          throw identityErrors.member_not_found('No such member in this organization');
        await store.addTeamMember(tx, organizationId, teamId, memberId);
        await copyMemberTeams(membership, tx, organizationId, memberId);
        tx.audit({
          action: 'team.member_added',
          organizationId,
          target: { type: 'team', id: teamId, name: teamName },
          changes: { memberId },
        });
      });
    },

    /**
     * Renames the team (teams.manage) or sets the role it gives its members (roles.manage too, a role whose
     * keys the caller holds, replacing one they hold: privileged, `requireFresh`). Its members' copies of their
     * teams follow, so their next request holds the new keys.
     */
    async updateTeam(
      ctx: CallerContext,
      organizationId: string,
      teamId: string,
      input: { name?: string | undefined; roleId?: string | null | undefined },
      requireFresh: FreshAuthenticationCheck,
    ): Promise<TeamRecord> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, 'teams.manage');
      const changesRole = input.roleId !== undefined;
      if (changesRole) {
        if (!acting.permissions.has('roles.manage')) throw missingPermission('roles.manage');
        requireFresh();
      }
      return writeTransaction(db, ctx, async (tx) => {
        const held = await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: 'teams.manage',
          refuse: membershipRefusals(),
        });
        const grantor = held?.permissions ?? acting.permissions;
        const before = await store.lockTeam(tx, organizationId, teamId);
        if (!before) throw teamErrors.team_not_found('No such team in this organization');
        const roleId = changesRole ? (input.roleId ?? null) : before.role_id;
        if (changesRole && roleId !== before.role_id) {
          if (!grantor.has('roles.manage')) throw missingPermission('roles.manage');
          if (roleId) await deps.roleGrants.requireGrantable(tx, organizationId, roleId, grantor);
          if (before.role_id) await deps.roleGrants.requireGrantable(tx, organizationId, before.role_id, grantor);
        }
        const after = await store.updateTeam(tx, organizationId, teamId, { name: input.name ?? before.name, roleId });
        if (!after) throw teamErrors.team_exists('A team with this name already exists');
        if (roleId !== before.role_id || after.name !== before.name)
          for (const memberId of await store.teamMemberIds(tx, organizationId, teamId))
            await copyMemberTeams(membership, tx, organizationId, memberId);
        tx.audit({
          action: 'team.updated',
          organizationId,
          target: { type: 'team', id: teamId, name: after.name },
          changes: {
            before: { name: before.name, roleId: before.role_id },
            after: { name: after.name, roleId: after.role_id },
          },
        });
        return after;
      });
    },

    /** Deletes the team: its members lose what it gave them (its role, the MCP connections it had access to). */
    async deleteTeam(ctx: CallerContext, organizationId: string, teamId: string): Promise<void> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, 'teams.manage');
      await writeTransaction(db, ctx, async (tx) => {
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: 'teams.manage',
          refuse: membershipRefusals(),
        });
        const team = await store.lockTeam(tx, organizationId, teamId);
        if (!team) throw teamErrors.team_not_found('No such team in this organization');
        const memberIds = await store.teamMemberIds(tx, organizationId, teamId);
        await store.deleteTeam(tx, organizationId, teamId);
        for (const memberId of memberIds) await copyMemberTeams(membership, tx, organizationId, memberId);
        tx.audit({
          action: 'team.deleted',
          organizationId,
          target: { type: 'team', id: teamId, name: team.name },
          changes: { before: { name: team.name, roleId: team.role_id, memberIds } },
        });
      });
    },

    async removeTeamMember(
      ctx: CallerContext,
      organizationId: string,
      teamId: string,
      memberId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      await membership.requireMembership(ctx.actor, organizationId, 'teams.manage_members');
      requireFresh();
      const teamName = await requireTeam(organizationId, teamId);
      const removed = await writeTransaction(db, ctx, async (tx) => {
        const done = await store.removeTeamMember(tx, organizationId, teamId, memberId);
        if (done) await copyMemberTeams(membership, tx, organizationId, memberId);
        if (done)
          tx.audit({
            action: 'team.member_removed',
            organizationId,
            target: { type: 'team', id: teamId, name: teamName },
            changes: { memberId },
          });
        return done;
      });
      if (!removed) throw identityErrors.member_not_found('That member is not in this team');
    },
  };
}

export type TeamService = ReturnType<typeof createTeamService>;
