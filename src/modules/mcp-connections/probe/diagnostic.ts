// The Diagnostic of the spec: what failed, where, who should act. Built here so every phase
// describes its failures the same way.

import { createHash } from 'node:crypto';
import { newId } from '../../../platform/ids.ts';

export const probePhases = [
  'CONFIGURATION',
  'NETWORK_DNS',
  'NETWORK_TCP',
  'NETWORK_TLS',
  'HTTP_ROUTING',
  'MCP_TRANSPORT',
  'MCP_VERSION',
  'MCP_INITIALIZE',
  'MCP_INITIALIZED',
  'MCP_TOOL_DISCOVERY',
] as const;

/** Every phase value of the spec (the probe reports auth phases when a credential is refused). */
export const diagnosticPhases = [
  'CONFIGURATION',
  'NETWORK_DNS',
  'NETWORK_TCP',
  'NETWORK_TLS',
  'HTTP_ROUTING',
  'AUTH_RESOURCE_DISCOVERY',
  'AUTH_ISSUER_DISCOVERY',
  'AUTH_CLIENT_REGISTRATION',
  'AUTH_USER_OR_WORKLOAD',
  'AUTH_TOKEN_ACQUISITION',
  'AUTH_RESOURCE_VALIDATION',
  'MCP_TRANSPORT',
  'MCP_VERSION',
  'MCP_INITIALIZE',
  'MCP_INITIALIZED',
  'MCP_TOOL_DISCOVERY',
  'MCP_TOOL_EXECUTION',
  'PROVIDER_AUTHORIZATION',
  'PROVIDER_EXECUTION',
  'CONTINUITY_REFRESH',
  'CONTINUITY_SESSION',
  'SHUTDOWN',
] as const;

export type DiagnosticPhase = (typeof diagnosticPhases)[number];
export type ProbePhase = (typeof probePhases)[number];

export const highestPassedValues = [
  'configured',
  'reachable',
  'authorized',
  'protocol_ready',
  'catalog_ready',
  'operation_ready',
] as const;
export type HighestPassed = (typeof highestPassedValues)[number];

export const actionOwners = ['vendor', 'network_admin', 'provider_admin', 'organization_admin', 'member'] as const;
export type ActionOwner = (typeof actionOwners)[number];

/** What a phase knows when it fails; the probe adds referenceId, highestPassed and outbound. */
export interface FailureDescription {
  phase: DiagnosticPhase;
  category: string;
  code: string;
  retryable: boolean;
  actionOwner: ActionOwner;
  operatorAction: string;
  message: string;
  httpStatus?: number;
  jsonRpcCode?: number;
}

export interface Diagnostic extends FailureDescription {
  referenceId: string;
  highestPassed: HighestPassed;
  providerStatus?: number;
  outbound?: { origin: string; pathHash: string };
}

/** Thrown by a phase function; `cause` is the underlying error, kept for the server log only. */
export class PhaseFailure extends Error {
  readonly description: FailureDescription;
  constructor(description: FailureDescription, cause?: unknown) {
    super(description.message, cause === undefined ? undefined : { cause });
    this.name = 'PhaseFailure';
    this.description = description;
  }
}

/**
 * A hash of path and query: lets an operator match the diagnostic to a URL they hold without the
 * diagnostic echoing a secret that some servers put in the path (`/mcp/<token>`).
 */
export function pathHash(url: URL): string {
  return createHash('sha256').update(`${url.pathname}${url.search}`).digest('hex').slice(0, 16);
}

export function outboundOf(url: URL | undefined): Diagnostic['outbound'] | undefined {
  if (!url) return undefined;
  return { origin: url.origin, pathHash: pathHash(url) };
}

export function buildDiagnostic(
  failure: FailureDescription,
  highestPassed: HighestPassed,
  url: URL | undefined,
): Diagnostic {
  const diagnostic: Diagnostic = {
    referenceId: newId('diag'),
    phase: failure.phase,
    category: failure.category,
    code: failure.code,
    highestPassed,
    retryable: failure.retryable,
    actionOwner: failure.actionOwner,
    operatorAction: failure.operatorAction,
    message: failure.message,
  };
  if (failure.httpStatus !== undefined && failure.httpStatus >= 100 && failure.httpStatus <= 599)
    diagnostic.httpStatus = failure.httpStatus;
  if (failure.jsonRpcCode !== undefined && Number.isInteger(failure.jsonRpcCode))
    diagnostic.jsonRpcCode = failure.jsonRpcCode;
  const outbound = outboundOf(url);
  if (outbound) diagnostic.outbound = outbound;
  return diagnostic;
}
