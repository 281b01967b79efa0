import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, writeContextOf } from '../../http/auth.ts';
import { invalidRequest } from '../../http/errors.ts';
import {
  commonErrorResponses,
  decodeCursor,
  encodeCursor,
  isoTimestamp,
  isoTimestampOrNull,
  queryInteger,
  errorResponse,
} from '../../http/schemas.ts';
import {
  maxBatch,
  memoryChangeSchema,
  memoryIdSchema,
  memoryInputSchema,
  memorySchema,
  memoryVersionSchema,
  searchQuerySchema,
  searchResultSchema,
  timeWindowSchema,
} from './schemas.ts';
import type { ListPosition, Memory, MemoryService } from './service.ts';
import type { MemoryInput } from './model.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { memoryErrors } from './error-codes.ts';

const bankRule =
  'Memories belong to the signed-in user. Each is filed under the organization the session is active in ' +
  '(when the caller is an active member of it; otherwise under no organization), and every memory route sees only ' +
  "the caller's memories filed under the current one: to reach memories written in another organization, switch " +
  'the session to it (PUT /v1/session/active-organization). Nobody else, admins included, can read them.';

const notFoundResponse = errorResponse(
  [memoryErrors.memory_not_found],
  'no such memory among yours in the active organization',
);
const errors = { 400: commonErrorResponses[400], 401: commonErrorResponses[401] };

/** A memory (or search result) as the API shows it: its fields, with timestamps in ISO form. */
const serialize = <T extends Pick<Memory, 'createdAt' | 'updatedAt' | 'expiresAt' | 'occurredAt'>>(memory: T) => ({
  ...memory,
  expiresAt: isoTimestampOrNull(memory.expiresAt),
  occurredAt: isoTimestampOrNull(memory.occurredAt),
  createdAt: isoTimestamp(memory.createdAt),
  updatedAt: isoTimestamp(memory.updatedAt),
});

const dateOf = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
const nullableDateOf = (value: string | null | undefined) => (value === null ? null : dateOf(value));

/** The request's new memory with its timestamps as dates. */
const inputOf = (body: z.infer<typeof memoryInputSchema>): MemoryInput => ({
  ...body,
  expiresAt: dateOf(body.expiresAt),
  occurredAt: dateOf(body.occurredAt),
});

// The cursor is decoded here and its timestamp goes into SQL as a parameter, so it must parse.
const isListCursor = (value: unknown): value is ListPosition =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ListPosition).createdAt === 'string' &&
  /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test((value as ListPosition).createdAt) &&
  !Number.isNaN(Date.parse((value as ListPosition).createdAt.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00'))) &&
  typeof (value as ListPosition).id === 'string' &&
  (value as ListPosition).id.length <= 64;

/** The signed-in user's memory bank: create, batch create, list, get, delete, and ranked search. */
export const memoryRoutes: FastifyPluginAsyncZod<{ service: MemoryService }> = async (app, { service }) => {
  app.post(
    '/v1/memory',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'createMemory',
        summary: 'Create a memory',
        description:
          `${bankRule} \`source\` defaults to \`api\` and \`scope\` to \`user\`. A memory with the same content as a live one of ` +
          'yours is not created again: 200 with the existing one and `deduplicated: true` (unless `allowDuplicate`; nothing else of the ' +
          'request is applied then, `supersedes` included).',
        body: memoryInputSchema,
        response: {
          201: z.object({ memory: memorySchema, deduplicated: z.literal(false) }).describe('Created'),
          200: z
            .object({ memory: memorySchema, deduplicated: z.literal(true) })
            .describe('A live memory of yours with the same content: that one, unchanged'),
          ...errors,
          404: errorResponse([memoryErrors.memory_not_found], 'the memory named by `supersedes` is not one of yours'),
          409: errorResponse(
            [memoryErrors.memory_superseded],
            'the memory named by `supersedes` is superseded already',
          ),
        },
      },
    },
    async (request, reply) => {
      const { memory, deduplicated } = await service.create(writeContextOf(request), inputOf(request.body));
      if (deduplicated) return reply.status(200).send({ memory: serialize(memory), deduplicated: true as const });
      return reply.status(201).send({ memory: serialize(memory), deduplicated: false as const });
    },
  );

  app.post(
    '/v1/memory/batch',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      // 1,000 memories of up to 20,000 characters do not fit the default 1 MiB body limit.
      bodyLimit: 32 * 1024 * 1024,
      schema: {
        tags: ['Memory'],
        operationId: 'createMemories',
        summary: 'Create up to 1,000 memories at once',
        description:
          `${bankRule} All or nothing: one invalid memory rejects the batch (400 with the path of the faulty item). ` +
          'The response lists the memories in the order given; `deduplicated[i]` is true when item i had the same content as a live ' +
          'memory of yours or as an earlier item of the batch, and `memories[i]` is then that memory. The body may be up to 32 MiB (then 413 `payload_too_large`).',
        body: z.object({ memories: z.array(memoryInputSchema).min(1).max(maxBatch) }).strict(),
        response: {
          201: z.object({ memories: z.array(memorySchema), deduplicated: z.array(z.boolean()) }),
          ...errors,
          404: errorResponse([memoryErrors.memory_not_found], 'a memory named by `supersedes` is not one of yours'),
          409: errorResponse(
            [memoryErrors.memory_superseded],
            'a memory named by `supersedes` is superseded already (or named twice)',
          ),
          413: errorResponse([httpErrors.payload_too_large], 'the body is over 32 MiB'),
        },
      },
    },
    async (request, reply) => {
      const created = await service.createMany(writeContextOf(request), request.body.memories.map(inputOf));
      return reply.status(201).send({
        memories: created.map((item) => serialize(item.memory)),
        deduplicated: created.map((item) => item.deduplicated),
      });
    },
  );

  app.get(
    '/v1/memory',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'listMemories',
        summary: 'List your memories, newest first',
        description: `${bankRule} Pages of \`limit\` (1 to 100, default 50); pass \`nextCursor\` as \`cursor\` for the next page (null on the last).`,
        querystring: z.object({
          limit: queryInteger(1, 100, 50),
          cursor: z.string().max(300).optional().describe("Opaque cursor from a previous page's `nextCursor`"),
        }),
        response: { 200: z.object({ memories: z.array(memorySchema), nextCursor: z.string().nullable() }), ...errors },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      let after: ListPosition | undefined;
      if (cursor !== undefined) {
        after = decodeCursor(cursor, isListCursor);
        if (!after)
          throw invalidRequest([{ message: 'Not a cursor this API issued', path: ['cursor'], in: 'querystring' }]);
      }
      const page = await service.list(callerOf(request), { limit, after });
      return { memories: page.items.map(serialize), nextCursor: page.next ? encodeCursor(page.next) : null };
    },
  );

  app.get(
    '/v1/memory/search',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'searchMemories',
        summary: 'Search your memories by relevance',
        description:
          `${bankRule} A natural-language query: its words are lower-cased, English stop words dropped and the rest ` +
          'stemmed (Porter2); a memory containing any of them is a candidate. Candidates are ranked by BM25F (the headline, ' +
          "a multi-line memory's first line, weighs more than the body) with one round of pseudo-relevance feedback, using " +
          'statistics of your own memories in this bank only; then a one-line memory lends a share of its score to the ' +
          'memories written just before and after it, which pass the same filters as any result. Ties go to the most ' +
          'recently updated. A query with no searchable ' +
          'word, or without a match, gives `{results: []}`. Expired and superseded memories are never results. `after`, `before` ' +
          'and a time phrase in `q` (see `time`) filter on when a memory happened: its `occurredAt`, else its creation.',
        querystring: searchQuerySchema,
        response: {
          200: z
            .object({ results: z.array(searchResultSchema), time: timeWindowSchema })
            .describe(
              'Your matching memories, most relevant first; `results` is empty (not an error) when nothing matches',
            ),
          ...errors,
        },
      },
    },
    async (request) => {
      const { after, before, now, ...query } = request.query;
      const { results, time } = await service.searchWithTime(callerOf(request), {
        ...query,
        after: dateOf(after),
        before: dateOf(before),
        now: dateOf(now),
      });
      return {
        results: results.map(serialize),
        time: time && { phrase: time.phrase, after: isoTimestamp(time.after), before: isoTimestamp(time.before) },
      };
    },
  );

  app.get(
    '/v1/memory/:id',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'getMemory',
        summary: 'Get one of your memories',
        description: bankRule,
        params: z.object({ id: memoryIdSchema }),
        response: { 200: z.object({ memory: memorySchema }), ...errors, 404: notFoundResponse },
      },
    },
    async (request) => ({ memory: serialize(await service.get(callerOf(request), request.params.id)) }),
  );

  app.patch(
    '/v1/memory/:id',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'updateMemory',
        summary: 'Change one of your memories',
        description:
          `${bankRule} The fields given replace the memory's; the version before the change is kept (GET /v1/memory/{id}/history) ` +
          'and `version` goes up by one. Search sees the change as soon as the response is sent.',
        params: z.object({ id: memoryIdSchema }),
        body: memoryChangeSchema,
        response: { 200: z.object({ memory: memorySchema }), ...errors, 404: notFoundResponse },
      },
    },
    async (request) => {
      const { expiresAt, occurredAt, ...change } = request.body;
      const memory = await service.update(writeContextOf(request), request.params.id, {
        ...change,
        expiresAt: nullableDateOf(expiresAt),
        occurredAt: nullableDateOf(occurredAt),
      });
      return { memory: serialize(memory) };
    },
  );

  app.get(
    '/v1/memory/:id/history',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'getMemoryHistory',
        summary: "A memory's versions, oldest first",
        description: `${bankRule} Every version the memory has had, the current one last, with when and by whom each was written. The history goes with the memory: once it is deleted, this is a 404.`,
        params: z.object({ id: memoryIdSchema }),
        response: { 200: z.object({ versions: z.array(memoryVersionSchema) }), ...errors, 404: notFoundResponse },
      },
    },
    async (request) => {
      const versions = await service.history(callerOf(request), request.params.id);
      return { versions: versions.map((v) => ({ ...v, changedAt: isoTimestamp(v.changedAt) })) };
    },
  );

  app.delete(
    '/v1/memory/:id',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Memory'],
        operationId: 'deleteMemory',
        summary: 'Delete one of your memories',
        description: `${bankRule} The memory leaves search results and ranking statistics in the same transaction, and its earlier versions (its history) are deleted with it.`,
        params: z.object({ id: memoryIdSchema }),
        response: { 204: z.null().describe('Deleted'), ...errors, 404: notFoundResponse },
      },
    },
    async (request, reply) => {
      await service.remove(writeContextOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
};
