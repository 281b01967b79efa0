// Writing memories: create (with deduplication and supersession), change (keeping each earlier
// version), history and delete. Search is service.ts.
import type { Database, Queryable } from '../../db/database.ts';
import { invalidRequest, type ValidationDetail } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { Caller } from '../identity/index.ts';
import { analyzeMemory, type AnalyzedMemory } from './analyzer.ts';
import { memoryErrors } from './error-codes.ts';
import {
  findByContentKeys,
  asVersion,
  listVersions,
  lockBank,
  lockMemory,
  putVersions,
  markSuperseded,
  takeVersions,
  updateFields,
} from './lifecycle-store.ts';
import {
  bankOf,
  contentKey,
  defaultScope,
  defaultSource,
  memoryIdPrefix,
  normalizeTags,
  toMemory,
  type Memory,
  type MemoryChange,
  type MemoryInput,
  type MemoryVersion,
} from './model.ts';
import { maxPostingCount } from './postings.ts';
import { deleteMemory, getMemory, insertMemories, type BankKey, type MemoryRow, type NewMemory } from './store.ts';

/**
 * The most words a memory may have once analyzed (headline and body together; stop words and
 * over-long tokens are not counted): a posting stores the field lengths and term counts as 16-bit
 * integers. 20,000 characters of ordinary text are at most 10,000 words, far below; only content
 * that Unicode NFKC expands (U+FDFA is one character and four words) can reach it, and is refused.
 */
export const maxMemoryWords = maxPostingCount;

/** What a create gave: the memory, and whether it was an existing one with the same content. */
export interface Created {
  memory: Memory;
  deduplicated: boolean;
}

export interface MemoryWrites {
  create(ctx: CallerContext, input: MemoryInput): Promise<Created>;
  createMany(ctx: CallerContext, inputs: MemoryInput[]): Promise<Created[]>;
  update(ctx: CallerContext, id: string, change: MemoryChange): Promise<Memory>;
  history(caller: Caller, id: string): Promise<MemoryVersion[]>;
  remove(ctx: CallerContext, id: string): Promise<void>;
}

function tooManyWords(analyzed: AnalyzedMemory, path: (string | number)[]): ValidationDetail | undefined {
  const words = analyzed.headLength + analyzed.bodyLength;
  if (words <= maxMemoryWords) return undefined;
  return {
    message:
      `Too many words: Unicode NFKC normalization turns this content into ${words.toLocaleString('en-US')} searchable words, ` +
      `and a memory may have at most ${maxMemoryWords.toLocaleString('en-US')}`,
    path,
    in: 'body',
  };
}

/**
 * Marks the memories the inputs supersede, after checking each is a live memory of the bank that no
 * other memory superseded yet (nor another input of the same request).
 */
async function supersede(tx: Queryable, key: BankKey, pairs: { old: string; by: string }[]): Promise<void> {
  const seen = new Set<string>();
  for (const { old, by } of pairs) {
    const row = await lockMemory(tx, key, old);
    if (!row) throw memoryErrors.memory_not_found(`No memory ${old} to supersede`);
    if (row.superseded_by !== null || seen.has(old))
      throw memoryErrors.memory_superseded(`Memory ${old} is already superseded by another memory`);
    seen.add(old);
    await markSuperseded(tx, key.userId, old, by);
  }
}

export function createMemoryWrites({ db }: { db: Database }): MemoryWrites {
  /** `contentPath` is where the request body has the content of input `index`, for a 400's details. */
  async function insert(
    ctx: CallerContext,
    inputs: MemoryInput[],
    contentPath: (index: number) => (string | number)[],
  ): Promise<Created[]> {
    const key = bankOf(ctx.actor);
    const memories = inputs.map(
      (input): NewMemory => ({
        id: newId(memoryIdPrefix),
        content: input.content,
        tags: normalizeTags(input.tags),
        source: input.source ?? defaultSource,
        scope: input.scope ?? defaultScope,
        analyzed: analyzeMemory(input.content),
        contentKey: contentKey(input.content),
        expiresAt: input.expiresAt ?? null,
        occurredAt: input.occurredAt ?? null,
        speaker: input.speaker ?? null,
      }),
    );
    // Checked on the analysis, before the transaction: the schema's character limit cannot bound
    // the word count, and a batch is all or nothing, so every faulty item is reported at once.
    const details = memories.flatMap((memory, index) => tooManyWords(memory.analyzed, contentPath(index)) ?? []);
    if (details.length > 0) throw invalidRequest(details);
    return writeTransaction(db, ctx, async (tx) => {
      // The bank's lock first: a concurrent create of the same content waits here, then finds this one.
      const bankId = await lockBank(tx, key);
      const existing = new Map<string, MemoryRow>();
      const wanted = memories.filter((_, index) => !inputs[index]!.allowDuplicate).map((m) => m.contentKey!);
      if (bankId !== undefined && wanted.length > 0) {
        for (const row of await findByContentKeys(tx, key, bankId, [...new Set(wanted)]))
          if (!existing.has(row.content_key)) existing.set(row.content_key, row);
      }
      // Each input is either an existing memory (same content, live, in this bank or earlier in the
      // batch) or one to insert; an input that allows duplicates is always inserted.
      const plan: ({ existing: MemoryRow } | { insert: NewMemory })[] = [];
      const firstInBatch = new Map<string, NewMemory>();
      const toInsert: NewMemory[] = [];
      memories.forEach((memory, index) => {
        const k = memory.contentKey!;
        const found = inputs[index]!.allowDuplicate ? undefined : existing.get(k);
        const earlier = inputs[index]!.allowDuplicate ? undefined : firstInBatch.get(k);
        if (found) plan.push({ existing: found });
        else if (earlier) plan.push({ insert: earlier });
        else {
          toInsert.push(memory);
          if (!firstInBatch.has(k)) firstInBatch.set(k, memory);
          plan.push({ insert: memory });
        }
      });
      const inserted = toInsert.length > 0 ? await insertMemories(tx, key, toInsert) : [];
      const byId = new Map(inserted.map((row) => [row.id, row]));
      const replaced = inputs.flatMap((input, index) => {
        const step = plan[index]!;
        return input.supersedes !== undefined && 'insert' in step && step.insert === memories[index]
          ? [{ old: input.supersedes, by: step.insert.id }]
          : [];
      });
      await supersede(tx, key, replaced);
      // The content is the user's own and stays out of the log: only that memories were written.
      if (inserted.length === 1)
        tx.audit({
          action: 'memory.created',
          organizationId: key.organizationId,
          target: { type: 'memory', id: inserted[0]!.id },
          ...(replaced.length > 0 ? { changes: { supersedes: replaced[0]!.old } } : {}),
        });
      else if (inserted.length > 1)
        tx.audit({
          action: 'memory.batch_created',
          organizationId: key.organizationId,
          target: { type: 'memory', id: inserted[0]!.id },
          changes: {
            count: inserted.length,
            ids: inserted.map((row) => row.id),
            ...(replaced.length > 0 ? { supersedes: replaced.map((pair) => pair.old) } : {}),
          },
        });
      return plan.map((step, index) => {
        if ('existing' in step) return { memory: toMemory(step.existing), deduplicated: true };
        const row = byId.get(step.insert.id)!;
        // A batch's later input with the same content gets the memory its first one created.
        return { memory: toMemory(row), deduplicated: step.insert !== memories[index] };
      });
    });
  }

  return {
    async create(ctx, input) {
      const [created] = await insert(ctx, [input], () => ['content']);
      return created!;
    },

    // The paths the batch route's schema reports an item's errors at.
    createMany: (ctx, inputs) => insert(ctx, inputs, (index) => ['memories', index, 'content']),

    async update(ctx, id, change) {
      const key = bankOf(ctx.actor);
      const analyzed = change.content !== undefined ? analyzeMemory(change.content) : undefined;
      const refused = analyzed && tooManyWords(analyzed, ['content']);
      if (refused) throw invalidRequest([refused]);
      const row = await writeTransaction(db, ctx, async (tx) => {
        // The bank's lock first, as every writer of the bank takes it.
        const locked = (await lockBank(tx, key)) !== undefined && (await lockMemory(tx, key, id));
        if (!locked) throw memoryErrors.memory_not_found('No such memory');
        const next = {
          tags: change.tags !== undefined ? normalizeTags(change.tags) : locked.tags,
          expiresAt: change.expiresAt !== undefined ? change.expiresAt : locked.expires_at,
          occurredAt: change.occurredAt !== undefined ? change.occurredAt : locked.occurred_at,
          speaker: change.speaker !== undefined ? change.speaker : locked.speaker,
        };
        tx.audit({
          action: 'memory.updated',
          organizationId: key.organizationId,
          target: { type: 'memory', id },
          changes: { fields: Object.keys(change).filter((field) => change[field as keyof MemoryChange] !== undefined) },
        });
        if (change.content === undefined || change.content === locked.content) {
          await putVersions(tx, key.userId, id, [asVersion(key.userId, locked)]);
          return updateFields(tx, key.userId, id, { ...next, by: key.userId });
        }
        // New content means new postings: the memory is taken out of the index and its statistics and
        // written again under its id, in this transaction, so a search after the commit sees the change.
        const earlier = await takeVersions(tx, key.userId, id);
        await deleteMemory(tx, key, id, { onlyLive: false });
        const [written] = await insertMemories(tx, key, [
          {
            id,
            content: change.content,
            source: locked.source,
            scope: locked.scope,
            analyzed: analyzed!,
            contentKey: contentKey(change.content),
            ...next,
            kept: {
              createdAt: locked.created_at,
              version: locked.version + 1,
              updatedBy: key.userId,
              supersededBy: locked.superseded_by,
            },
          },
        ]);
        await putVersions(tx, key.userId, id, [...earlier, asVersion(key.userId, locked)]);
        return written!;
      });
      return toMemory(row);
    },

    async history(caller, id) {
      const key = bankOf(caller);
      const current = await getMemory(db, key, id);
      if (!current) throw memoryErrors.memory_not_found('No such memory');
      const earlier = await listVersions(db, key.userId, id);
      return [
        ...earlier.map((v) => ({
          version: v.version,
          content: v.content,
          tags: v.tags,
          changedAt: v.changed_at,
          changedBy: v.changed_by,
        })),
        {
          version: current.version,
          content: current.content,
          tags: current.tags,
          changedAt: current.updated_at,
          changedBy: current.updated_by ?? key.userId,
        },
      ];
    },

    async remove(ctx, id) {
      const bank = bankOf(ctx.actor);
      const removed = await writeTransaction(db, ctx, async (tx) => {
        // The bank's lock first, as a change takes it before the memory's row: never the other way round.
        if ((await lockBank(tx, bank)) === undefined) return false;
        const done = await deleteMemory(tx, bank, id);
        if (done)
          tx.audit({ action: 'memory.deleted', organizationId: bank.organizationId, target: { type: 'memory', id } });
        return done;
      });
      if (!removed) throw memoryErrors.memory_not_found('No such memory');
    },
  };
}
