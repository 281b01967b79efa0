// SCIM Groups: kept as metadata with their members (groupMappingMode metadata_only), not mapped to teams.
import type { Queryable } from '../../db/database.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import { newId } from '../../platform/ids.ts';
import { writeTransaction } from '../../platform/write-context.ts';
import {
  filterOf,
  isObject,
  meta,
  optionalString,
  parseOperations,
  requireDomain,
  requiredString,
  requireVerifiedDomain,
  verifiedDomain,
  type Doc,
  type ScimConnector,
  type ScimContext,
  type ScimDeps,
} from './context.ts';
import { listResponse, type Paging } from './documents.ts';
import { ScimError } from './errors.ts';
import { applyPatch } from './patch.ts';
import { normalizeResource } from './resource.ts';
import { GROUP_SCHEMA } from './schema.ts';
import type { GroupMemberRef, ScimGroupRow } from './store.ts';

function renderGroup(baseUrl: string, row: ScimGroupRow, members: GroupMemberRef[]): Doc {
  const {
    schemas: _schemas,
    displayName: _displayName,
    externalId: _externalId,
    members: _members,
    ...rest
  } = row.resource;
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    ...rest,
    members: members.map((m) => ({
      value: m.scim_user_id,
      display: m.user_display,
      $ref: `${baseUrl}/Users/${m.scim_user_id}`,
      type: 'User',
    })),
    meta: meta(baseUrl, 'Group', row),
  };
}

async function groupWithMembers(deps: ScimDeps, tx: Queryable, ctx: ScimConnector, row: ScimGroupRow): Promise<Doc> {
  return renderGroup(deps.baseUrl, row, await deps.store.memberships(tx, ctx.organizationId, 'group', [row.id]));
}

function loadGroup(deps: ScimDeps, ctx: ScimConnector, id: string): Promise<ScimGroupRow> {
  return deps.store.findGroup(deps.db, ctx.organizationId, id).then((row) => {
    if (!row) throw new ScimError(404, `Group ${id} not found`);
    return row;
  });
}

/** Member references of a group body: SCIM user ids of this organization, nothing else. */
async function memberIds(deps: ScimDeps, tx: Queryable, ctx: ScimConnector, doc: Doc): Promise<string[]> {
  const members = doc.members === undefined ? [] : doc.members;
  if (!Array.isArray(members)) throw new ScimError(400, 'members must be an array', 'invalidValue');
  const ids = members.map((m) => (isObject(m) && typeof m.value === 'string' ? m.value : null));
  if (ids.some((id) => id === null))
    throw new ScimError(400, 'each member needs a string value (a User id)', 'invalidValue');
  const unique = [...new Set(ids as string[])];
  // Locked before the group's membership rows: a user's deletion holds its row, then deletes those
  // rows (ON DELETE CASCADE), so taking them first and the user's row after would deadlock with it.
  const known = new Set(await deps.store.lockExistingUserIds(tx, ctx.organizationId, unique));
  const unknown = unique.filter((id) => !known.has(id));
  if (unknown.length > 0) throw unknownMembers(unknown);
  return unique;
}

function unknownMembers(ids: string[]): ScimError {
  return new ScimError(400, `Unknown member ${ids.slice(0, 5).join(', ')}: provision the users first`, 'invalidValue');
}

/** Sets a group's members; a listed user deleted since `memberIds` checked it is as unknown as one never provisioned. */
async function setGroupMembers(
  deps: ScimDeps,
  tx: Queryable,
  ctx: ScimConnector,
  groupId: string,
  ids: string[],
): Promise<void> {
  try {
    await deps.store.setGroupMembers(tx, ctx.organizationId, groupId, ids);
  } catch (error) {
    if (!isForeignKeyViolation(error)) throw error;
    const key = /\(scim_user_id\)=\(([^)]*)\)/.exec(String((error as { detail?: unknown }).detail ?? ''));
    throw unknownMembers(key ? [key[1]!] : ids);
  }
}

/** Adding members gives access, so it waits for a verified domain like provisioning users; removing them never does. */
function requireDomainToAdd(domain: string | null, current: GroupMemberRef[], ids: string[]): void {
  const before = new Set(current.map((m) => m.scim_user_id));
  if (ids.some((id) => !before.has(id))) requireDomain(domain);
}

function groupFields(doc: Doc) {
  return { displayName: requiredString(doc, 'displayName'), externalId: optionalString(doc, 'externalId') };
}

/** What is stored of a group: its attributes without members (they live in scim_group_members). */
function groupResource(doc: Doc): Doc {
  const copy = { ...doc };
  delete copy.members;
  return copy;
}

/** Stores the group as `doc` says, with its members; `current` gives whom it has now (adding needs the domain). */
async function writeGroup(
  deps: ScimDeps,
  tx: Queryable,
  ctx: ScimConnector,
  id: string,
  doc: Doc,
  domain: string | null,
  current: () => Promise<GroupMemberRef[]>,
): Promise<Doc> {
  const fields = groupFields(doc);
  const ids = await memberIds(deps, tx, ctx, doc);
  requireDomainToAdd(domain, await current(), ids);
  const row = await deps.store.updateGroup(tx, ctx.organizationId, id, { ...fields, resource: groupResource(doc) });
  await setGroupMembers(deps, tx, ctx, id, ids);
  return groupWithMembers(deps, tx, ctx, row);
}

export async function listGroups(
  deps: ScimDeps,
  ctx: ScimConnector,
  query: { filter?: string | undefined; paging: Paging; excludeMembers: boolean },
) {
  const { rows, total } = await deps.store.listGroups(
    deps.db,
    ctx.organizationId,
    filterOf(query.filter),
    query.paging.startIndex - 1,
    query.paging.count,
  );
  const members = query.excludeMembers
    ? []
    : await deps.store.memberships(
        deps.db,
        ctx.organizationId,
        'group',
        rows.map((r) => r.id),
      );
  const resources = rows.map((row) => {
    const rendered = renderGroup(
      deps.baseUrl,
      row,
      members.filter((m) => m.group_id === row.id),
    );
    if (query.excludeMembers) delete rendered.members;
    return rendered;
  });
  return listResponse(resources, total, query.paging);
}

export async function getGroup(deps: ScimDeps, ctx: ScimConnector, id: string): Promise<Doc> {
  return groupWithMembers(deps, deps.db, ctx, await loadGroup(deps, ctx, id));
}

/** Groups are kept as metadata (groupMappingMode metadata_only): they do not become teams. */
export async function createGroup(deps: ScimDeps, ctx: ScimContext, body: unknown): Promise<Doc> {
  const doc = normalizeResource('Group', body);
  await requireVerifiedDomain(deps, ctx);
  const fields = groupFields(doc);
  return writeTransaction(deps.db, ctx, async (tx) => {
    const ids = await memberIds(deps, tx, ctx, doc);
    const row = await deps.store.insertGroup(tx, {
      id: newId('scimg'),
      organizationId: ctx.organizationId,
      ...fields,
      resource: groupResource(doc),
    });
    await setGroupMembers(deps, tx, ctx, row.id, ids);
    tx.audit({
      action: 'scim_group.created',
      target: { type: 'scim_group', id: row.id, name: fields.displayName },
      changes: { displayName: fields.displayName, members: ids },
    });
    return groupWithMembers(deps, tx, ctx, row);
  });
}

export async function replaceGroup(deps: ScimDeps, ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
  const domain = await verifiedDomain(deps, ctx);
  return writeTransaction(deps.db, ctx, async (tx) => {
    // Locked, so a concurrent delete either waits for this write or has already made it a 404.
    if (!(await deps.store.findGroup(tx, ctx.organizationId, id, true)))
      throw new ScimError(404, `Group ${id} not found`);
    const doc = normalizeResource('Group', body);
    tx.audit({
      action: 'scim_group.replaced',
      target: { type: 'scim_group', id, name: typeof doc.displayName === 'string' ? doc.displayName : null },
    });
    return writeGroup(deps, tx, ctx, id, doc, domain, () =>
      deps.store.memberships(tx, ctx.organizationId, 'group', [id]),
    );
  });
}

export async function patchGroup(deps: ScimDeps, ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
  const operations = parseOperations(body);
  const domain = await verifiedDomain(deps, ctx);
  return writeTransaction(deps.db, ctx, async (tx) => {
    const existing = await deps.store.findGroup(tx, ctx.organizationId, id, true);
    if (!existing) throw new ScimError(404, `Group ${id} not found`);
    const members = await deps.store.memberships(tx, ctx.organizationId, 'group', [id]);
    const current: Doc = {
      ...existing.resource,
      displayName: existing.display_name,
      members: members.map((m) => ({ value: m.scim_user_id })),
    };
    if (existing.external_id !== null) current.externalId = existing.external_id;
    tx.audit({
      action: 'scim_group.updated',
      target: { type: 'scim_group', id, name: existing.display_name },
      changes: { operations: operations.map((operation) => operation.op) },
    });
    return writeGroup(
      deps,
      tx,
      ctx,
      id,
      normalizeResource('Group', applyPatch('Group', current, operations)),
      domain,
      async () => members,
    );
  });
}

export async function deleteGroup(deps: ScimDeps, ctx: ScimContext, id: string): Promise<void> {
  await loadGroup(deps, ctx, id);
  await writeTransaction(deps.db, ctx, async (tx) => {
    await deps.store.deleteGroup(tx, ctx.organizationId, id);
    tx.audit({ action: 'scim_group.deleted', target: { type: 'scim_group', id } });
  });
}
