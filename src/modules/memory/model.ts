// What a memory is to the service and the routes, apart from how it is searched (service.ts) or
// written (writes.ts), so that both build on it without importing each other.
import { createHash } from 'node:crypto';
import { unauthorized } from '../../http/errors.ts';
import type { Caller } from '../identity/index.ts';
import type { BankKey, MemoryRow } from './store.ts';

export const memoryIdPrefix = 'mry';
export const defaultSource = 'api';
export const defaultScope = 'user';

export interface MemoryInput {
  content: string;
  tags?: string[] | undefined;
  source?: string | undefined;
  scope?: string | undefined;
  supersedes?: string | undefined;
  expiresAt?: Date | undefined;
  occurredAt?: Date | undefined;
  speaker?: string | undefined;
  allowDuplicate?: boolean | undefined;
}

/** A change of a memory: a field given replaces it, `null` clears an optional one. */
export interface MemoryChange {
  content?: string | undefined;
  tags?: string[] | undefined;
  expiresAt?: Date | null | undefined;
  occurredAt?: Date | null | undefined;
  speaker?: string | null | undefined;
}

export interface Memory {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  organizationId: string | null;
  version: number;
  expiresAt: Date | null;
  occurredAt: Date | null;
  speaker: string | null;
  supersededBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface MemoryVersion {
  version: number;
  content: string;
  tags: string[];
  changedAt: Date;
  changedBy: string;
}

/**
 * The bank a caller works in: their own memories under the session's active organization when
 * they are an active member of it, else their memories outside any organization. Every route
 * (create, list, get, change, delete, search) sees only that bank, so the same user's memories in another
 * organization are invisible until they switch the session to it.
 */
export function bankOf(caller: Caller): BankKey {
  if (!caller.userId) throw unauthorized();
  return { userId: caller.userId, organizationId: caller.memberId ? caller.organizationId : null };
}

export function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    content: row.content,
    tags: row.tags,
    source: row.source,
    scope: row.scope,
    organizationId: row.organization_id,
    version: row.version,
    expiresAt: row.expires_at,
    occurredAt: row.occurred_at,
    speaker: row.speaker,
    supersededBy: row.superseded_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Tags are a set: duplicates are dropped, first occurrence order kept. */
export function normalizeTags(tags: string[] | undefined): string[] {
  return [...new Set(tags ?? [])];
}

const wordPattern = /[\p{L}\p{N}]+/gu;

/**
 * What two memories must share to be the same content: the text as the analyzer reads it (Unicode
 * NFKC, lower case, its letter and digit runs), so spacing, punctuation and case do not make a new
 * memory, while every word (stop words and endings included) still counts. Kept as a digest: the
 * content may be 20,000 characters, and only equality is asked.
 */
export function contentKey(content: string): string {
  const words = content.normalize('NFKC').toLowerCase().match(wordPattern) ?? [];
  return createHash('sha256').update(words.join(' ')).digest('hex');
}
