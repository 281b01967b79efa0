// The tool policy as the connection response shows it (view.ts) and GET .../tools applies it (tools.ts).
import { isoTimestampOrNull } from '../../http/schemas.ts';
import { defaultToolPolicy, type ToolPolicy } from './catalog-store.ts';

export function toolPolicyView(policy: ToolPolicy | undefined) {
  const { mode, tools, destructiveNeedsApproval, updatedAt } = policy ?? defaultToolPolicy();
  return { mode, tools, destructiveNeedsApproval, updatedAt: isoTimestampOrNull(updatedAt) };
}
