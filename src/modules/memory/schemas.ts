import { z } from 'zod';
import { queryInteger, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import { defaultScope, defaultSource, maxMemoryWords, memoryIdPrefix } from './service.ts';

export const maxBatch = 1000;
export const maxContentLength = 20_000;

export const memoryIdSchema = typeIdSchema(memoryIdPrefix).describe(
  `Memory id: \`${memoryIdPrefix}_\` followed by 26 base32 characters`,
);

// PostgreSQL text cannot hold U+0000: refused here as a 400 on its field. (A lone UTF-16 surrogate,
// which would be stored as U+FFFD, never gets this far: the API's JSON parser refuses it, src/http/json-body.ts.)
const noNul = (value: string) => !value.includes('\u0000');

// Labels are short and printable so that they can be used as filters in a query string.
const labelPattern = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;
const labelSchema = (name: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .regex(labelPattern, { message: `${name} is letters, digits and . _ : / - (starting with a letter or digit)` });

export const tagSchema = z
  .string()
  .min(1)
  .max(64)
  .refine((tag) => !tag.includes(','), { message: 'A tag cannot contain a comma' })
  .refine(noNul, { message: 'Text cannot contain the NUL character' })
  .describe('1 to 64 characters, no comma');

export const sourceSchema = labelSchema('source').describe(
  `Where the memory came from: a short label chosen by the client, e.g. \`api\`, \`chat\`, \`import\`, \`mcp\`. ` +
    `1 to 64 characters: letters, digits and \`. _ : / -\`. Default \`${defaultSource}\`.`,
);
export const scopeSchema = labelSchema('scope').describe(
  `What the memory is about, as a label the client filters on, e.g. \`user\` (facts about the user), \`project:apollo\`, \`session\`. ` +
    `1 to 64 characters: letters, digits and \`. _ : / -\`. Default \`${defaultScope}\`.`,
);

export const memoryInputSchema = z
  .object({
    content: z
      .string()
      .min(1)
      .max(maxContentLength)
      .refine(noNul, { message: 'Text cannot contain the NUL character' })
      .describe(
        'The memory text, 1 to 20,000 characters. When it has more than one line, its first line is treated as its headline and weighs more in search. ' +
          `Once analyzed for search (Unicode NFKC normalization, stop words dropped) it may have at most ${maxMemoryWords.toLocaleString('en-US')} words: ` +
          'ordinary text has at most 10,000, but a few characters expand into several words (U+FDFA is four), and content over the limit is refused with 400 `invalid_request`.',
      ),
    tags: z.array(tagSchema).max(50).optional().describe('Up to 50 tags; duplicates are dropped. Default none.'),
    source: sourceSchema.optional(),
    scope: scopeSchema.optional(),
  })
  .strict()
  .meta({ id: 'NewMemory' });

/** What a memory shows wherever it appears. */
const memoryFields = {
  id: memoryIdSchema,
  content: z.string(),
  tags: z.array(z.string()),
  source: z
    .string()
    .describe('The label the memory was written with (`source` of POST /v1/memory): where it came from'),
  scope: z.string().describe('The label the memory was written with (`scope` of POST /v1/memory): what it is about'),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
};

export const memorySchema = z
  .object({
    ...memoryFields,
    organizationId: z
      .string()
      .nullable()
      .describe('The organization the session was active in when the memory was written (null: none)'),
  })
  .meta({ id: 'Memory' });

export const searchResultSchema = z
  .object({
    ...memoryFields,
    score: z.number().describe('Relevance (BM25F with feedback, higher is better); comparable within one search only'),
  })
  .meta({ id: 'MemorySearchResult' });

/** `tags` may be repeated (`tags=a&tags=b`) or comma-separated (`tags=a,b`), or both. */
const tagsQuerySchema = z
  .union([z.string(), z.array(z.string())])
  .transform((value) =>
    (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(',')).filter((tag) => tag !== ''),
  )
  .pipe(z.array(z.string().min(1).max(64)).max(50))
  .optional()
  .describe('Only memories that carry every tag given. Repeat the parameter or separate tags with commas; up to 50.');

export const searchQuerySchema = z.object({
  q: z
    .string()
    .min(1)
    .max(1000)
    .describe(
      'The query in natural language, 1 to 1,000 characters. A memory that contains any of its words (after stemming, without stop words) is a candidate.',
    ),
  limit: queryInteger(1, 100, 10).describe('How many results, 1 to 100. Default 10.'),
  tags: tagsQuerySchema,
  source: sourceSchema.optional().describe('Only memories with this source'),
  scope: scopeSchema.optional().describe('Only memories with this scope'),
});
