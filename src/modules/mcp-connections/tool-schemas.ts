// Zod schemas of GET .../tools and PUT .../tool-policy.
import { z } from 'zod';
import { timestampSchema } from '../../http/schemas.ts';
import { catalogLimits } from './probe/index.ts';
import { toolPolicyModeSchema, toolPolicySchema } from './schemas.ts';

export const toolPolicyInputSchema = z
  .object({
    mode: toolPolicyModeSchema,
    tools: z
      .array(z.string().min(1).max(catalogLimits.maxNameChars))
      .max(1000)
      .default([])
      .describe(
        'Tool names (duplicates are kept once); must be empty with mode `all`. A name need not be in the catalog now',
      ),
    destructiveNeedsApproval: z.boolean(),
  })
  .meta({ id: 'McpToolPolicyChange' });

const annotationsSchema = z.object({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

export const catalogToolSchema = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        `The tool's JSON Schema as the server gave it (one larger than ${catalogLimits.maxSchemaBytes} bytes is stored as {"type":"object"}); null for an absent tool`,
      ),
    annotations: annotationsSchema.optional(),
    allowed: z.boolean().describe('The tool policy lets you use this tool'),
    needsApproval: z
      .boolean()
      .describe('Allowed, but each call needs an approval (destructiveNeedsApproval and the tool may be destructive)'),
    absent: z
      .boolean()
      .describe(
        'Named by the tool policy but not in the stored catalog (gone from the server, or beyond the stored part of a truncated catalog)',
      ),
  })
  .meta({ id: 'McpCatalogTool' });

export const toolCatalogSchema = z
  .object({
    serverInfo: z.object({ name: z.string(), version: z.string() }).nullable(),
    protocolVersion: z.string().nullable(),
    capabilities: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('The capabilities the server declared at initialize'),
    promptCount: z
      .number()
      .int()
      .nullable()
      .describe('Prompts the server offers (null: not known, the listing failed or no catalog yet)'),
    resourceCount: z.number().int().nullable().describe('Resources the server offers (null: not known)'),
    catalogUpdatedAt: timestampSchema
      .nullable()
      .describe('When the catalog was taken; null: no successful probe or test of the current configuration yet'),
    truncated: z
      .boolean()
      .describe(
        `The server offered more than is stored: over ${catalogLimits.maxTools} tools, or a tool too large ` +
          `(inputSchema over ${catalogLimits.maxSchemaBytes} bytes or ${catalogLimits.maxDepth} levels, description over ${catalogLimits.maxDescriptionChars} characters, ` +
          `a name over ${catalogLimits.maxNameChars} characters), or over ${catalogLimits.maxTotalBytes} bytes in all`,
      ),
    toolPolicy: toolPolicySchema,
    tools: z.array(catalogToolSchema),
  })
  .meta({ id: 'McpToolCatalog' });
