import { z } from 'zod';
import { queryInteger, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import { defaultScope, defaultSource, memoryIdPrefix } from './model.ts';
import { maxMemoryWords } from './writes.ts';

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

const speakerSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(noNul, { message: 'Text cannot contain the NUL character' })
  .describe(
    "Who said it, as free text (1 to 200 characters), e.g. a person's name. Search filters on it (`speaker`, any case).",
  );

const contentSchema = z
  .string()
  .min(1)
  .max(maxContentLength)
  .refine(noNul, { message: 'Text cannot contain the NUL character' })
  .describe(
    'The memory text, 1 to 20,000 characters. When it has more than one line, its first line is treated as its headline and weighs more in search. ' +
      `Once analyzed for search (Unicode NFKC normalization, stop words dropped) it may have at most ${maxMemoryWords.toLocaleString('en-US')} words: ` +
      'ordinary text has at most 10,000, but a few characters expand into several words (U+FDFA is four), and content over the limit is refused with 400 `invalid_request`.',
  );

export const memoryInputSchema = z
  .object({
    content: contentSchema,
    tags: z.array(tagSchema).max(50).optional().describe('Up to 50 tags; duplicates are dropped. Default none.'),
    source: sourceSchema.optional(),
    scope: scopeSchema.optional(),
    supersedes: memoryIdSchema
      .optional()
      .describe(
        'A live memory of yours that this one replaces: it leaves search results (it can still be read by id, with its history) ' +
          'and shows `supersededBy`. 404 `memory_not_found` when there is no such memory, 409 `memory_superseded` when another memory superseded it already.',
      ),
    expiresAt: timestampSchema
      .optional()
      .describe(
        'When the memory expires: from then on it is gone from search, lists and reads (404), and it is deleted soon after.',
      ),
    occurredAt: timestampSchema
      .optional()
      .describe(
        'When what the memory records happened (e.g. the conversation it comes from). Search filters on it (`after`, `before`).',
      ),
    speaker: speakerSchema.optional(),
    allowDuplicate: z
      .boolean()
      .optional()
      .describe(
        'By default a memory with the same content as a live one of yours (compared as search reads it: Unicode NFKC, lower case, ' +
          'words only, so spacing, punctuation and case do not count) is not created again: the existing one is returned with ' +
          '`deduplicated: true`. `true` creates it anyway.',
      ),
  })
  .strict()
  .meta({ id: 'NewMemory' });

const nullableTimestamp = z.union([timestampSchema, z.null()]);

export const memoryChangeSchema = z
  .object({
    content: contentSchema.optional(),
    tags: z
      .array(tagSchema)
      .max(50)
      .optional()
      .describe('The new tags (replacing the old ones); duplicates are dropped.'),
    expiresAt: nullableTimestamp
      .optional()
      .describe('The new expiry; `null` removes it. A time already past expires the memory at once.'),
    occurredAt: nullableTimestamp.optional().describe('When it happened; `null` removes it.'),
    speaker: z.union([speakerSchema, z.null()]).optional().describe('Who said it; `null` removes it.'),
  })
  .strict()
  .refine((change) => Object.values(change).some((value) => value !== undefined), {
    message: 'Give at least one of content, tags, expiresAt, occurredAt, speaker',
  })
  .meta({ id: 'MemoryChange' });

/** What a memory shows wherever it appears. */
const memoryFields = {
  id: memoryIdSchema,
  content: z.string(),
  tags: z.array(z.string()),
  source: z
    .string()
    .describe('The label the memory was written with (`source` of POST /v1/memory): where it came from'),
  scope: z.string().describe('The label the memory was written with (`scope` of POST /v1/memory): what it is about'),
  version: z.number().int().describe('1 when written, one more with each change (GET /v1/memory/{id}/history)'),
  expiresAt: timestampSchema.nullable().describe('When it expires (null: never)'),
  occurredAt: timestampSchema.nullable().describe('When what it records happened (null: not given)'),
  speaker: z.string().nullable().describe('Who said it (null: not given)'),
  supersededBy: memoryIdSchema
    .nullable()
    .describe('The memory that replaced this one (it is then out of search); null if none'),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
};

export const memoryVersionSchema = z
  .object({
    version: z.number().int(),
    content: z.string(),
    tags: z.array(z.string()),
    changedAt: timestampSchema.describe('When this version was written'),
    changedBy: z.string().describe('The user who wrote it'),
  })
  .meta({ id: 'MemoryVersion' });

export const timeWindowSchema = z
  .object({
    phrase: z.string().describe('The time phrase as the query had it'),
    after: timestampSchema,
    before: timestampSchema,
  })
  .nullable()
  .describe(
    'The time phrase found in `q` ("yesterday", "today", "N days/weeks/months ago", "last week", "this week", "last month", ' +
      '"this month", "last year", "in <Month>", "in <Month> <year>"), read relative to `now` in UTC days: its words left the query ' +
      'and the results are limited to memories that happened in [after, before) (null: none found)',
  );

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
  after: timestampSchema
    .optional()
    .describe('Only memories that happened at or after this time (their `occurredAt`, else their creation)'),
  before: timestampSchema.optional().describe('Only memories that happened before this time'),
  speaker: z.string().min(1).max(200).optional().describe('Only memories with this speaker (any case)'),
  now: timestampSchema
    .optional()
    .describe(
      'The reference time for the relative dates in `q` ("yesterday", "last week"); default the server\'s clock',
    ),
});
