import type { Queryable } from '../../db/database.ts';
import { tokenCondition, type TokenLookup } from '../../platform/tokens.ts';

export interface InstallLinkTarget {
  link_id: string;
  organization_id: string;
  organization_name: string;
}

/** SQL for install links. Every statement names the organization or looks up by token hash only. */
export function createInstallLinkStore() {
  return {
    async revokeActive(tx: Queryable, organizationId: string): Promise<number> {
      const { rowCount } = await tx.query(
        'UPDATE install_links SET revoked_at = now() WHERE organization_id = $1 AND revoked_at IS NULL',
        [organizationId],
      );
      return rowCount ?? 0;
    },

    async insert(
      tx: Queryable,
      link: {
        id: string;
        organizationId: string;
        tokenHash: string;
        createdByMemberId: string | null;
        rotation: boolean;
      },
    ): Promise<void> {
      await tx.query(
        `INSERT INTO install_links (id, organization_id, token_hash, created_by_member_id, rotation)
         VALUES ($1, $2, $3, $4, $5)`,
        [link.id, link.organizationId, link.tokenHash, link.createdByMemberId, link.rotation],
      );
    },

    /** The organization a still-valid link points to. */
    async findActiveByToken(db: Queryable, lookup: TokenLookup): Promise<InstallLinkTarget | undefined> {
      const { where, params } = tokenCondition(lookup, 'l.token_hash', 'l.organization_id');
      const { rows } = await db.query<InstallLinkTarget>(
        `SELECT l.id AS link_id, o.id AS organization_id, o.name AS organization_name
           FROM install_links l JOIN organizations o ON o.id = l.organization_id
          WHERE ${where} AND l.revoked_at IS NULL`,
        params,
      );
      return rows[0];
    },
  };
}
