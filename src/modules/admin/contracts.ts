// The instance-administration module's records, shared by its store, service and routes.
import type { Plan } from '../organizations/index.ts';

export interface PersonRow {
  id: string;
  email: string;
  name: string;
  is_instance_admin: boolean;
  created_at: Date;
  organizations: number;
  last_authenticated_at: Date | null;
}

export interface OrganizationRow {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
  members: number;
}

export interface AdminRow {
  id: string;
  email: string;
  name: string;
  created_at: Date;
}

export interface Overview {
  people: number;
  organizations: number;
  activePeople: { d1: number; d7: number; d30: number };
  administrators: number;
  deadAuditStreams: number;
}
