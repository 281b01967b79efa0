// Shared pieces of the memory tests: a client per user and an independent ranking reference.
import assert from 'node:assert/strict';
import { analyzeMemory, queryTerms } from '../../src/modules/memory/analyzer.ts';
import { ranking } from '../../src/modules/memory/service.ts';
import { api, type ApiResponse } from '../support/http.ts';

export interface StoredMemory {
  id: string;
  content: string;
  tags: string[];
  source: string;
  scope: string;
  organizationId: string | null;
  version: number;
  expiresAt: string | null;
  occurredAt: string | null;
  speaker: string | null;
  supersededBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export function memoryClient(baseUrl: string, token: string) {
  const client = api(baseUrl, token);
  return {
    client,
    async create(body: Record<string, unknown>): Promise<StoredMemory> {
      const response = await client.post('/v1/memory', body);
      assert.equal(response.status, 201, response.text);
      return response.body.memory;
    },
    async batch(memories: Record<string, unknown>[]): Promise<StoredMemory[]> {
      const response = await client.post('/v1/memory/batch', { memories });
      assert.equal(response.status, 201, response.text);
      return response.body.memories;
    },
    async search(
      q: string,
      extra = '',
    ): Promise<
      {
        id: string;
        content: string;
        score: number;
        updatedAt: string;
        tags: string[];
        source: string;
        scope: string;
        createdAt: string;
      }[]
    > {
      const response = await client.get(`/v1/memory/search?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(response.status, 200, response.text);
      return response.body.results;
    },
    async remove(id: string): Promise<void> {
      const response = await client.delete(`/v1/memory/${id}`);
      assert.equal(response.status, 204, response.text);
    },
    async listAll(): Promise<StoredMemory[]> {
      const all: StoredMemory[] = [];
      let cursor: string | null = null;
      do {
        const response: ApiResponse = await client.get(`/v1/memory?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(response.status, 200, response.text);
        all.push(...response.body.memories);
        cursor = response.body.nextCursor;
      } while (cursor);
      return all;
    },
  };
}

/**
 * The ranking written out plainly over in-memory documents: BM25F with the headline weighted, then
 * one round of RM3 feedback, candidates limited to memories with one of the query's own words; then
 * each scored one-line memory lends a share of its score to the memories written just before and
 * after it. `docs` are the bank's memories in the order they were written, the user's only writes
 * (so that the one written next is the next in the list). The SQL engine must agree with it (to
 * rounding) on both backends.
 */
export function referenceRanking(docs: { id: string; content: string; updatedAt: string }[], q: string, limit: number) {
  const analyzed = docs.map((doc) => ({ ...doc, a: analyzeMemory(doc.content) }));
  const n = analyzed.length;
  const avgHead = analyzed.reduce((sum, doc) => sum + doc.a.headLength, 0) / n || 1;
  const avgBody = analyzed.reduce((sum, doc) => sum + doc.a.bodyLength, 0) / n || 1;
  const df = new Map<string, number>();
  for (const doc of analyzed) for (const term of doc.a.terms) df.set(term, (df.get(term) ?? 0) + 1);
  const { k1, headWeight, headB, bodyB, feedback } = ranking;
  const own = new Set(queryTerms(q));

  const pass = (weights: Map<string, number>) => {
    const scored: { id: string; updatedAt: string; score: number }[] = [];
    for (const doc of analyzed) {
      let score = 0;
      let hasOwn = false;
      doc.a.terms.forEach((term, i) => {
        const weight = weights.get(term);
        if (weight === undefined) return;
        if (own.has(term)) hasOwn = true;
        const idf = Math.log(1 + (n - df.get(term)! + 0.5) / (df.get(term)! + 0.5));
        const f =
          (headWeight * doc.a.headTf[i]!) / (1 - headB + (headB * doc.a.headLength) / avgHead) +
          doc.a.bodyTf[i]! / (1 - bodyB + (bodyB * doc.a.bodyLength) / avgBody);
        score += (weight * idf * (k1 + 1) * f) / (f + k1);
      });
      if (hasOwn) scored.push({ id: doc.id, updatedAt: doc.updatedAt, score });
    }
    return scored.sort(
      (x, y) =>
        y.score - x.score || (x.updatedAt < y.updatedAt ? 1 : x.updatedAt > y.updatedAt ? -1 : x.id < y.id ? 1 : -1),
    );
  };

  const first = pass(new Map([...own].map((term) => [term, 1])));
  if (first.length === 0) return [];
  const top = first.slice(0, feedback.documents);
  const mass = new Map<string, number>();
  for (const hit of top) {
    const doc = analyzed.find((d) => d.id === hit.id)!;
    const length = doc.a.headLength + doc.a.bodyLength;
    const docWeight = Math.exp(hit.score - top[0]!.score);
    for (const [i, term] of doc.a.terms.entries())
      mass.set(term, (mass.get(term) ?? 0) + (docWeight * (doc.a.headTf[i]! + doc.a.bodyTf[i]!)) / length);
  }
  const selected = [...mass.entries()]
    .filter(([term]) => own.has(term) || df.get(term)! <= feedback.maxDocumentShare * n)
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, feedback.terms);
  const total = selected.reduce((sum, [, value]) => sum + value, 0);
  const scale = own.size / feedback.originalWeight;
  const weights = new Map([...own].map((term) => [term, 1]));
  for (const [term, value] of selected)
    weights.set(term, (weights.get(term) ?? 0) + (scale * (1 - feedback.originalWeight) * value) / total);
  const final = pass(weights);
  const withContext = new Map(final.map((hit) => [hit.id, hit.score]));
  const at = new Map(analyzed.map((doc, i) => [doc.id, i]));
  for (const hit of final) {
    const i = at.get(hit.id)!;
    if (analyzed[i]!.a.headLength > 0 || hit.score <= 0) continue;
    for (const neighbour of [analyzed[i - 1], analyzed[i + 1]]) {
      if (neighbour)
        withContext.set(neighbour.id, (withContext.get(neighbour.id) ?? 0) + ranking.neighbourShare * hit.score);
    }
  }
  return [...withContext.entries()]
    .map(([id, score]) => ({ id, updatedAt: analyzed[at.get(id)!]!.updatedAt, score }))
    .sort(
      (x, y) =>
        y.score - x.score || (x.updatedAt < y.updatedAt ? 1 : x.updatedAt > y.updatedAt ? -1 : x.id < y.id ? 1 : -1),
    )
    .slice(0, limit);
}
