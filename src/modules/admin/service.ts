// Instance administration: what its routes may do once they know the caller is an instance
// administrator who authenticated recently (routes.ts judges that). It sees counts and settings of
// every organization and person, never their content; every change writes an event to the instance's
// own audit chain (organization null), and a change of an organization to that organization's too.
import type { Database } from '../../db/database.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { OrganizationDirectory, Plan } from '../organizations/index.ts';
import type { UserDirectory } from '../users/index.ts';
import type { AdminRow, OrganizationRow, Overview, PersonRow } from './contracts.ts';
import { adminErrors } from './error-codes.ts';
import * as store from './store.ts';

export interface AdminServiceDeps {
  db: Database;
  organizations: Pick<OrganizationDirectory, 'setPlan' | 'lockOrganization'>;
  users: Pick<UserDirectory, 'lockInstanceAdmins' | 'setInstanceAdmin'>;
}

export interface AttentionItem {
  code: 'single_administrator' | 'audit_streams_dead';
  message: string;
  count: number;
}

function attentionOf(overview: Overview): AttentionItem[] {
  const items: AttentionItem[] = [];
  if (overview.administrators === 1)
    items.push({
      code: 'single_administrator',
      message: 'The instance has one administrator: add another, so that losing one account does not lock everyone out',
      count: 1,
    });
  if (overview.deadAuditStreams > 0)
    items.push({
      code: 'audit_streams_dead',
      message: 'Audit-log streams stopped after repeated delivery failures; their organizations must re-enable them',
      count: overview.deadAuditStreams,
    });
  return items;
}

export function createAdminService(deps: AdminServiceDeps) {
  const { db, organizations, users } = deps;
  return {
    async overview() {
      const counts = await store.overview(db);
      return { ...counts, attention: attentionOf(counts) };
    },

    listPeople: (search: string | undefined, after: string | undefined, limit: number): Promise<PersonRow[]> =>
      store.listPeople(db, search, after, limit),

    listOrganizations: (
      search: string | undefined,
      after: string | undefined,
      limit: number,
    ): Promise<OrganizationRow[]> => store.listOrganizations(db, search, after, limit),

    listAdmins: (): Promise<AdminRow[]> => store.listAdmins(db),

    /** Makes the account with this e-mail an administrator; `added` is false when it was one already (nothing changes). */
    async addAdmin(ctx: CallerContext, email: string): Promise<{ admin: AdminRow; added: boolean }> {
      return writeTransaction(db, ctx, async (tx) => {
        const admins = await users.lockInstanceAdmins(tx);
        const admin = await store.findAdminByEmail(tx, email);
        if (!admin) throw adminErrors.person_not_found('No account has this e-mail address');
        if (admins.includes(admin.id)) return { admin, added: false };
        await users.setInstanceAdmin(tx, admin.id, true);
        tx.audit({
          action: 'instance_admin.added',
          organizationId: null,
          target: { type: 'user', id: admin.id, name: admin.email },
          changes: { isInstanceAdmin: true },
        });
        return { admin, added: true };
      });
    },

    /** Never the last one: 409 last_admin. Administrators are locked while this runs, so two removals cannot leave none. */
    async removeAdmin(ctx: CallerContext, userId: string): Promise<void> {
      await writeTransaction(db, ctx, async (tx) => {
        const admins = await users.lockInstanceAdmins(tx);
        if (!admins.includes(userId)) throw adminErrors.admin_not_found('This person is not an instance administrator');
        if (admins.length === 1)
          throw adminErrors.last_admin('The last instance administrator cannot be removed: add another first');
        await users.setInstanceAdmin(tx, userId, false);
        const person = await store.findAdmin(tx, userId);
        tx.audit({
          action: 'instance_admin.removed',
          organizationId: null,
          target: { type: 'user', id: userId, name: person?.email ?? null },
          changes: { isInstanceAdmin: false },
        });
      });
    },

    /** Changes what is given (the plan); 404 for an unknown organization. */
    async updateOrganization(
      ctx: CallerContext,
      organizationId: string,
      changes: { plan?: Plan | undefined },
    ): Promise<OrganizationRow> {
      await writeTransaction(db, ctx, async (tx) => {
        if (!(await organizations.lockOrganization(tx, organizationId)))
          throw httpErrors.organization_not_found('No such organization');
        const before = await store.findOrganization(tx, organizationId);
        if (changes.plan === undefined || before?.plan === changes.plan) return;
        const changed = await organizations.setPlan(tx, organizationId, changes.plan);
        const target = { type: 'organization', id: organizationId, name: changed?.name ?? null };
        const planChange = { plan: { from: before?.plan ?? null, to: changes.plan } };
        // The instance's log says which administrator did it; the organization's tells its owners.
        tx.audit({ action: 'organization.plan_changed', organizationId: null, target, changes: planChange });
        tx.audit({ action: 'organization.plan_changed', organizationId, target, changes: planChange });
      });
      return (await store.findOrganization(db, organizationId))!;
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
