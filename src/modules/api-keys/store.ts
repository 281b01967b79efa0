// SQL of organization API keys (the membership core resolves a presented key; see identity's store).
import type { Role } from '../../http/caller.ts';
import type { Queryable } from '../../db/database.ts';

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string;
  role: Role;
  created_at: Date;
}

export async function insertApiKey(
  db: Queryable,
  key: {
    id: string;
    organizationId: string;
    name: string;
    role: Role;
    keyHash: string;
    createdBy: string | null;
  },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, organization_id, name, role, key_hash, created_by) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING id, organization_id, name, role, created_at`,
    [key.id, key.organizationId, key.name, key.role, key.keyHash, key.createdBy],
  );
  return rows[0]!;
}

export async function listApiKeys(
  db: Queryable,
  organizationId: string,
  limit: number,
  after?: string,
): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, organization_id, name, role, created_at FROM api_keys
      WHERE organization_id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR id > $2)
      ORDER BY id LIMIT $3`,
    [organizationId, after ?? null, limit],
  );
  return rows;
}

/** The revoked key's name, or undefined when there was no such live key. */
export async function revokeApiKey(db: Queryable, organizationId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING name',
    [organizationId, id],
  );
  return rows[0]?.name;
}
