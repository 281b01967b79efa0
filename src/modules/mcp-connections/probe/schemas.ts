// The Diagnostic as the API describes it: the one shape every failed probe and OAuth flow answers with.
import { z } from 'zod';
import { actionOwners, diagnosticPhases, highestPassedValues } from './diagnostic.ts';

export const diagnosticSchema = z
  .object({
    referenceId: z.string(),
    phase: z.enum(diagnosticPhases),
    category: z
      .string()
      .describe(
        'What failed: configuration, dns, network, network_policy, tls, http, transport, protocol, timeout, authorization, ' +
          'authorization_server, resource, client_registration, token, internal. New categories may be added.',
      ),
    code: z
      .string()
      .describe(
        'A stable snake_case identifier of the failure within its category (for example dns_not_found, tls_certificate_untrusted, ' +
          'api_key_rejected, unsupported_protocol_version). New codes may be added: branch on `actionOwner` and `retryable`, show `message` and `operatorAction`.',
      ),
    highestPassed: z.enum(highestPassedValues),
    retryable: z.boolean(),
    actionOwner: z.enum(actionOwners),
    operatorAction: z.string(),
    message: z.string(),
    httpStatus: z.number().int().min(100).max(599).optional(),
    operationPhase: z.enum(diagnosticPhases).optional(),
    outbound: z.object({ origin: z.string(), pathHash: z.string() }).optional(),
    providerRequestId: z.string().optional(),
    providerStatus: z.number().int().optional(),
    providerCode: z.string().optional(),
    payloadBytes: z.number().int().optional(),
    jsonRpcCode: z.number().int().optional(),
    connectUrl: z.url().optional(),
  })
  .meta({ id: 'Diagnostic' });
