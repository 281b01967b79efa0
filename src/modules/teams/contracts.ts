// What other modules use of teams (index.ts exports it) and what the module's own files share: in its
// own file, so that index.ts and the service both import it and neither imports the other.
import type { Queryable } from '../../db/database.ts';

export interface TeamRecord {
  id: string;
  organization_id: string;
  name: string;
  /** The role the team gives its members besides their own (a built-in name or a custom role's id), if any. */
  role_id: string | null;
  created_at: Date;
}

export interface TeamDirectory {
  /** Of `ids`, the ones that are teams of the organization. */
  listTeamIds(organizationId: string, ids: string[], tx?: Queryable): Promise<string[]>;
  /** Adds the member to those of `teamIds` that are still teams of the organization (in the caller's transaction). */
  addMemberToTeams(tx: Queryable, organizationId: string, memberId: string, teamIds: string[]): Promise<void>;
}
