import { useEffect, useState } from 'preact/hooks';
import { api, type Member } from './api.ts';

/**
 * The caller's own member record in the organization shown, so a page offers only the actions its
 * role allows (the API refuses the others anyway). The shell shows the session's active organization,
 * which is what GET /v1/org answers. The second value reloads it (a transfer of ownership changes it).
 */
export function useCaller(organizationId: string): [Member | null, () => Promise<void>] {
  const [caller, setCaller] = useState<Member | null>(null);
  async function load() {
    const answer = await api.GET('/v1/org');
    setCaller(answer.data?.organization.id === organizationId ? answer.data.currentMember : null);
  }
  useEffect(() => void load(), [organizationId]);
  return [caller, load];
}

export const isManager = (caller: Member | null) => caller?.role === 'owner' || caller?.role === 'admin';
