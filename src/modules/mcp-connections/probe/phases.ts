// The connection probe, one function per phase, run in this order:
//   CONFIGURATION -> NETWORK_DNS -> NETWORK_TCP -> NETWORK_TLS -> HTTP_ROUTING -> MCP_TRANSPORT
//   -> MCP_VERSION -> MCP_INITIALIZE -> MCP_INITIALIZED -> MCP_TOOL_DISCOVERY
// Each phase reads what earlier phases left in the context, does one thing, and either returns
// or throws a PhaseFailure that says what broke and who can fix it. Every socket and request goes
// to addresses the guarded outbound client has checked: DNS answers come from `outbound.resolve`,
// the TCP/TLS checks dial only those addresses, and all HTTP goes through `outbound.fetch`.

import type { ProbePhase } from './diagnostic.ts';
import { httpRouting } from './http-phases.ts';
import { mcpInitialize, mcpInitialized, mcpToolDiscovery, mcpTransport, mcpVersion } from './mcp-phases.ts';
import { configuration, networkDns, networkTcp, networkTls } from './network-phases.ts';
import type { PhaseFunction } from './phase-kit.ts';

export type { PhaseFunction, ProbeAuthType, ProbeContext } from './phase-kit.ts';

/** The phases in order, each with the milestone reached once it has passed. */
export const phases: ReadonlyArray<{ name: ProbePhase; run: PhaseFunction }> = [
  { name: 'CONFIGURATION', run: configuration },
  { name: 'NETWORK_DNS', run: networkDns },
  { name: 'NETWORK_TCP', run: networkTcp },
  { name: 'NETWORK_TLS', run: networkTls },
  { name: 'HTTP_ROUTING', run: httpRouting },
  { name: 'MCP_TRANSPORT', run: mcpTransport },
  { name: 'MCP_VERSION', run: mcpVersion },
  { name: 'MCP_INITIALIZE', run: mcpInitialize },
  { name: 'MCP_INITIALIZED', run: mcpInitialized },
  { name: 'MCP_TOOL_DISCOVERY', run: mcpToolDiscovery },
];
