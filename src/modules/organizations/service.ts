// Organizations: creating one, the session's active one (GET /v1/org), and plans.
import type { PermissionKey } from '../../platform/permissions.ts';
import type { Database, Queryable } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import { forbidden, unauthorized } from '../../http/errors.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import {
  writeTransaction,
  type CallerContext,
  type WriteContext,
  type WriteTransaction,
} from '../../platform/write-context.ts';
import {
  membershipRefusals,
  requireSignedInUser,
  sessionOf,
  sessionTokenLookup,
  type MemberRecord,
  type MembershipAuthorization,
  type MembershipSessions,
} from '../identity/index.ts';
import type { TeamRecord } from '../teams/index.ts';
import type { OrganizationDirectory, OrganizationEraser, OrganizationRecord, Plan } from './contracts.ts';
import { organizationErrors } from './error-codes.ts';
import * as store from './store.ts';
import { httpErrors } from '../../http/error-codes.ts';

/** What other modules use of organizations (OrganizationDirectory): reads and the row lock. */
export function createOrganizationDirectory(deps: { db: Database; defaultPlan?: Plan }) {
  const { db } = deps;
  const plan = deps.defaultPlan ?? 'free';
  return {
    getOrganization: (organizationId: string) => store.findOrganization(db, organizationId),
    lockOrganization: (tx: Queryable, organizationId: string) => store.lockOrganization(tx, organizationId),
    countOrganizations: (tx: Queryable) => store.countOrganizations(tx),
    addOrganization: (tx: Queryable, name: string) =>
      store.insertOrganization(tx, { id: newId(idPrefixes.organization), name, plan }),
    setPlan: (tx: Queryable, organizationId: string, newPlan: Plan) => store.setPlan(tx, organizationId, newPlan),
    listOrganizationsOfUser: (userId: string) => store.listOrganizationsOfUser(db, userId),
  } satisfies OrganizationDirectory;
}

export interface OrganizationServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember' | 'addMember'> &
    Pick<MembershipSessions, 'setSessionOrganization'>;
  /** Each module's part of erasing an organization (the composition gathers them from the modules' index.ts). */
  erasers: readonly OrganizationEraser[];
  /** The plan of a new organization (DEFAULT_PLAN); free when not given (the CLI's plan change makes none). */
  defaultPlan?: Plan;
}

const renameOrganization: PermissionKey = 'organization.update';
const onlyTheOwner = () => forbidden('Only the owner deletes the organization');

export function createOrganizationService(deps: OrganizationServiceDeps) {
  const { db, membership, erasers } = deps;
  const defaultPlan = deps.defaultPlan ?? 'free';
  const findActiveOrganization = sessionTokenLookup(db, (batch) => store.findActiveOrganizationsByTokens(db, batch));

  /**
   * Every module's rows first (what no foreign key deletes), then the organization's row, whose ON DELETE
   * CASCADE keys take the rest; the event goes to the instance's chain, since the organization's own log is
   * erased with it.
   */
  async function eraseIn(tx: WriteTransaction, organizationId: string): Promise<boolean> {
    if (!(await store.lockOrganization(tx, organizationId))) return false;
    for (const eraser of erasers) await eraser.erase(tx, organizationId);
    const name = await store.deleteOrganization(tx, organizationId);
    if (name === undefined) return false;
    tx.audit({
      action: 'organization.deleted',
      organizationId: null,
      target: { type: 'organization', id: organizationId, name },
      changes: { name },
    });
    return true;
  }

  return {
    async createOrganization(ctx: CallerContext, name: string): Promise<OrganizationRecord> {
      const userId = requireSignedInUser(ctx.actor);
      return writeTransaction(db, ctx, async (tx) => {
        const organization = await store.insertOrganization(tx, {
          id: newId(idPrefixes.organization),
          name,
          plan: defaultPlan,
        });
        await membership.addMember(tx, organization.id, userId, 'owner');
        await membership.setSessionOrganization(tx, sessionOf(ctx.actor), organization.id);
        tx.audit({
          action: 'organization.created',
          organizationId: organization.id,
          target: { type: 'organization', id: organization.id, name },
          changes: { name },
        });
        return organization;
      });
    },

    /** Owners and admins; privileged (`requireFresh`): the name is what invitations and the console show everyone. */
    async renameOrganization(
      ctx: CallerContext,
      organizationId: string,
      name: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<OrganizationRecord> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, renameOrganization);
      requireFresh();
      return writeTransaction(db, ctx, async (tx) => {
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: renameOrganization,
          refuse: membershipRefusals(),
        });
        const renamed = await store.renameOrganization(tx, organizationId, name);
        if (!renamed) throw httpErrors.organization_not_found('No such organization');
        const { previous_name: previous, ...organization } = renamed;
        if (previous !== name)
          tx.audit({
            action: 'organization.renamed',
            organizationId,
            target: { type: 'organization', id: organizationId, name },
            changes: { name: { from: previous, to: name } },
          });
        return organization;
      });
    },

    /**
     * The owner only, privileged (`requireFresh`), and `confirm` must be the organization's name as it is now.
     * Erases it in one transaction (eraseOrganization).
     */
    async deleteOrganization(
      ctx: CallerContext,
      organizationId: string,
      confirm: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      const acting = await membership.requireMembership(ctx.actor, organizationId);
      if (acting.role !== 'owner') throw onlyTheOwner();
      requireFresh();
      await writeTransaction(db, ctx, async (tx) => {
        // Still the owner: a transfer committed since makes the caller an admin.
        const held = await membership.holdActingMember(tx, organizationId, acting.memberId, {
          refuse: membershipRefusals(),
        });
        if (held?.role !== 'owner') throw onlyTheOwner();
        const organization = (await store.lockOrganization(tx, organizationId))
          ? await store.findOrganization(tx, organizationId)
          : undefined;
        if (!organization) throw httpErrors.organization_not_found('No such organization');
        if (confirm.trim() !== organization.name)
          throw organizationErrors.confirmation_mismatch(
            "Type the organization's name exactly as it is shown to confirm deleting it",
          );
        await eraseIn(tx, organizationId);
      });
    },

    /**
     * Erases an organization and everything it holds in every module, in `ctx`'s own transaction, whoever
     * asks (the caller decides who may: the owner's route above, an instance administrator's tooling).
     * False when there was no such organization.
     */
    async eraseOrganization(ctx: WriteContext, organizationId: string): Promise<boolean> {
      return writeTransaction(db, ctx, (tx) => eraseIn(tx, organizationId));
    },

    async setActiveOrganization(ctx: CallerContext, organizationId: string): Promise<OrganizationRecord> {
      requireSignedInUser(ctx.actor);
      await membership.requireMembership(ctx.actor, organizationId);
      await writeTransaction(db, ctx, async (tx) => {
        await membership.setSessionOrganization(tx, sessionOf(ctx.actor), organizationId);
        tx.audit({
          action: 'session.organization_switched',
          organizationId,
          target: { type: 'session', id: ctx.actor.sessionId! },
          changes: { activeOrganizationId: organizationId },
        });
      });
      return (await store.findOrganization(db, organizationId))!;
    },

    /**
     * Spec operation 7: the active organization, its owner, and the caller's member record and teams,
     * resolved together with the session in one database round trip.
     */
    async getActiveOrganization(sessionToken: string | undefined) {
      const row = await findActiveOrganization(sessionToken);
      if (!row) throw unauthorized();
      if (!row.organization || !row.owner || !row.current_member) {
        throw httpErrors.organization_not_found(
          row.active_organization_id
            ? 'You are no longer a member of the active organization; choose another with PUT /v1/session/active-organization'
            : 'This session has no active organization; create one or choose one with PUT /v1/session/active-organization',
        );
      }
      const withDate = <T extends { created_at: string }>(value: T) => ({
        ...value,
        created_at: new Date(value.created_at),
      });
      return {
        organization: withDate(row.organization) as OrganizationRecord,
        owner: withDate(row.owner) as MemberRecord,
        currentMember: withDate(row.current_member) as MemberRecord,
        teams: (row.teams ?? []).map(withDate) as TeamRecord[],
      };
    },

    /**
     * Instance administrators (the route) and the operator (the CLI, systemContext) only: checked here so
     * the route and the CLI share the rule.
     */
    async setPlan(ctx: WriteContext, organizationId: string, plan: Plan): Promise<OrganizationRecord> {
      const { actor } = ctx;
      const allowed =
        actor.kind === 'system' || ((actor.kind === 'session' || actor.kind === 'api_key') && actor.isInstanceAdmin);
      if (!allowed) throw forbidden('Only instance administrators set plans');
      const organization = await writeTransaction(db, ctx, async (tx) => {
        const changed = await store.setPlan(tx, organizationId, plan);
        if (changed) {
          const target = { type: 'organization', id: organizationId, name: changed.name };
          tx.audit({ action: 'organization.plan_changed', organizationId, target, changes: { plan } });
          // And in the instance's own log, where instance administration is recorded.
          tx.audit({ action: 'organization.plan_changed', organizationId: null, target, changes: { plan } });
        }
        return changed;
      });
      if (!organization) throw httpErrors.organization_not_found('No such organization');
      return organization;
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
