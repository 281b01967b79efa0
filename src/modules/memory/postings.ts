/**
 * Packed postings (the layout of memory_blocks.data, migration 0402) and BM25F scoring over them.
 *
 * Scoring happens here rather than in SQL: summing a few tens of thousands of postings is a
 * millisecond or two in the application, where in SQL each posting was a row through an
 * expression and a hash aggregate. Both backends send the same bytes, and this one piece of code
 * does the arithmetic, so their scores are equal by construction.
 */

/** Bytes per posting: memory_seq int8, head_tf int2, body_tf int2, head_length int2, body_length int2 (big-endian). */
export const postingSize = 16;
/** Postings per block: 1,600 bytes keep a block row under PostgreSQL's out-of-line (TOAST) threshold. */
export const blockCapacity = 100;
/** Scores are summed as integers of this many units per point (see scorePostings). */
export const scoreUnitsPerPoint = 1e9;

export interface Posting {
  seq: number;
  headTf: number;
  bodyTf: number;
  headLength: number;
  bodyLength: number;
}

export interface NewBlock {
  term: string;
  firstSeq: number;
  lastSeq: number;
  postings: number;
  maxHeadTf: number;
  maxBodyTf: number;
  minHeadLength: number;
  minBodyLength: number;
  data: Buffer;
  /** The first new block of its term may be appended to the term's last stored block. */
  mergeable: boolean;
}

/** Splits postings sorted by (term, seq) into blocks of at most blockCapacity per term. */
export function packBlocks(sorted: { term: string; posting: Posting }[]): NewBlock[] {
  const blocks: NewBlock[] = [];
  let start = 0;
  while (start < sorted.length) {
    const term = sorted[start]!.term;
    let end = start;
    while (end < sorted.length && end - start < blockCapacity && sorted[end]!.term === term) end++;
    const previous = blocks[blocks.length - 1];
    const data = Buffer.alloc((end - start) * postingSize);
    const block: NewBlock = {
      term,
      firstSeq: sorted[start]!.posting.seq,
      lastSeq: sorted[end - 1]!.posting.seq,
      postings: end - start,
      maxHeadTf: 0,
      maxBodyTf: 0,
      minHeadLength: Number.MAX_SAFE_INTEGER,
      minBodyLength: Number.MAX_SAFE_INTEGER,
      data,
      mergeable: previous?.term !== term,
    };
    for (let i = start; i < end; i++) {
      const p = sorted[i]!.posting;
      writePosting(data, (i - start) * postingSize, p);
      block.maxHeadTf = Math.max(block.maxHeadTf, p.headTf);
      block.maxBodyTf = Math.max(block.maxBodyTf, p.bodyTf);
      block.minHeadLength = Math.min(block.minHeadLength, p.headLength);
      block.minBodyLength = Math.min(block.minBodyLength, p.bodyLength);
    }
    blocks.push(block);
    start = end;
  }
  return blocks;
}

/**
 * The largest term frequency or field length a posting holds (int2). A memory's word count is not
 * bounded by its 20,000 characters (Unicode NFKC turns some characters into several words), so the
 * service refuses a memory with more words than this before anything is written (maxMemoryWords).
 */
export const maxPostingCount = 32_767;

function writePosting(data: Buffer, offset: number, p: Posting): void {
  // The service has refused longer memories, so this cannot happen on any input; it is checked
  // because writeInt16BE would otherwise store a wrong count without a word.
  const max = maxPostingCount;
  if (p.headTf > max || p.bodyTf > max || p.headLength > max || p.bodyLength > max) {
    throw new Error('memory too long for a packed posting');
  }
  data.writeUInt32BE(Math.floor(p.seq / 2 ** 32), offset);
  data.writeUInt32BE(p.seq % 2 ** 32, offset + 4);
  data.writeInt16BE(p.headTf, offset + 8);
  data.writeInt16BE(p.bodyTf, offset + 10);
  data.writeInt16BE(p.headLength, offset + 12);
  data.writeInt16BE(p.bodyLength, offset + 14);
}

/** The block's data without the posting of memory `seq` (unchanged when it is not there). */
export function withoutPosting(data: Buffer, seq: number): Buffer {
  const hi = Math.floor(seq / 2 ** 32);
  const lo = seq % 2 ** 32;
  for (let offset = 0; offset < data.length; offset += postingSize) {
    if (data.readUInt32BE(offset) === hi && data.readUInt32BE(offset + 4) === lo) {
      return Buffer.concat([data.subarray(0, offset), data.subarray(offset + postingSize)]);
    }
  }
  return data;
}

export interface Bm25f {
  k1: number;
  headWeight: number;
  headB: number;
  bodyB: number;
  avgHeadLength: number;
  avgBodyLength: number;
}

/**
 * PostgreSQL's round() of a float8 (rint: halves to even). The scores were computed in SQL before
 * and are kept bit for bit, so the ranking did not change when scoring moved here.
 */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Scores by memory_seq: an open-addressing hash table over typed arrays. A search adds tens of
 * thousands of postings; a Map spent most of the scoring time in its own bookkeeping.
 */
export class ScoreTable {
  /** Slots: a memory_seq (0 for an empty slot) and its score units. */
  keys: Float64Array;
  values: Float64Array;
  private oneLine: Uint8Array;
  private shift: number;
  size = 0;

  constructor(expected = 16) {
    let bits = 4;
    while (1 << bits < expected * 2) bits++;
    this.keys = new Float64Array(1 << bits);
    this.values = new Float64Array(1 << bits);
    this.oneLine = new Uint8Array(1 << bits);
    this.shift = 32 - bits;
  }

  private slot(seq: number): number {
    // Sequence numbers are positive integers below 2^53; 0 marks an empty slot.
    const mixed = Math.imul((seq | 0) ^ ((seq / 4294967296) | 0), 0x9e3779b1) >>> this.shift;
    const mask = this.keys.length - 1;
    let i = mixed;
    while (this.keys[i] !== 0 && this.keys[i] !== seq) i = (i + 1) & mask;
    return i;
  }

  /**
   * Adds `units` to the memory's score; with `onlyExisting`, only when the memory is already scored.
   * `oneLine` marks a memory newly scored as one without a headline (see withNeighbours).
   */
  add(seq: number, units: number, onlyExisting: boolean, oneLine = false): void {
    const i = this.slot(seq);
    if (this.keys[i] === 0) {
      if (onlyExisting) return;
      this.keys[i] = seq;
      this.values[i] = units;
      this.oneLine[i] = oneLine ? 1 : 0;
      if (++this.size * 2 > this.keys.length) this.grow();
      return;
    }
    this.values[i]! += units;
  }

  /** Whether the memory in slot `i` was scored as a one-line memory (no headline). */
  isOneLine(i: number): boolean {
    return this.oneLine[i] === 1;
  }

  forEach(fn: (seq: number, units: number) => void): void {
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== 0) fn(this.keys[i]!, this.values[i]!);
  }

  clone(): ScoreTable {
    const copy = new ScoreTable();
    copy.keys = this.keys.slice();
    copy.values = this.values.slice();
    copy.oneLine = this.oneLine.slice();
    copy.shift = this.shift;
    copy.size = this.size;
    return copy;
  }

  private grow(): void {
    const { keys, values, oneLine } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.values = new Float64Array(keys.length * 2);
    this.oneLine = new Uint8Array(keys.length * 2);
    this.shift -= 1;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] === 0) continue;
      const j = this.slot(keys[i]!);
      this.keys[j] = keys[i]!;
      this.values[j] = values[i]!;
      this.oneLine[j] = oneLine[i]!;
    }
  }
}

/**
 * Context from neighbouring memories: every scored one-line memory lends `share` of its score to the
 * memories written just before and after it (memory_seq - 1 and + 1), which become candidates if they
 * were not. A one-line memory is typically a turn of a conversation or a note in a sequence, and what
 * it answers is often said in the turn next to it ("What did you research?" / "Adoption agencies."):
 * the smoothing of passage retrieval, where a passage is scored with its surroundings. A memory with a
 * headline is a document that stands on its own and lends nothing. The neighbours may be missing
 * (deleted, in another bank): the caller must look them up with that in mind. Shares are whole units,
 * so the result does not depend on the table's order.
 */
export function withNeighbours(scores: ScoreTable, share: number): ScoreTable {
  const out = new ScoreTable(scores.size * 3);
  const { keys, values } = scores;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] === 0) continue;
    out.add(keys[i]!, values[i]!, false, scores.isOneLine(i));
  }
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] === 0 || !scores.isOneLine(i) || values[i]! <= 0) continue;
    const lent = Math.round(share * values[i]!);
    if (keys[i]! > 1) out.add(keys[i]! - 1, lent, false);
    out.add(keys[i]! + 1, lent, false);
  }
  return out;
}

/**
 * Adds one term's contributions (times `sign`) to `scores`. BM25F: the term's pseudo-frequency is
 * the headline frequency (weighted, length-normalized against the bank's average headline) plus
 * the body frequency (normalized against the average body); the contribution is
 * factor x f / (f + k1). Contributions are rounded to whole units before summing: addition of
 * whole numbers below 2^53 is exact in any order, so the sum does not depend on the order of terms
 * or postings, and subtracting a term's contributions with the same factor removes them exactly.
 * With `onlyExisting`, memories not yet in `scores` are skipped (a memory must contain one of the
 * query's own words to be a candidate; those are added first).
 */
export function scorePostings(
  scores: ScoreTable,
  blocks: Buffer[],
  factor: number,
  bm: Bm25f,
  onlyExisting: boolean,
  sign: 1 | -1 = 1,
): void {
  const { k1, headWeight, headB, bodyB } = bm;
  const avgHead = bm.avgHeadLength > 0 ? bm.avgHeadLength : 1;
  const avgBody = bm.avgBodyLength > 0 ? bm.avgBodyLength : 1;
  for (const data of blocks) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let offset = 0; offset < data.byteLength; offset += postingSize) {
      const seq = view.getUint32(offset) * 2 ** 32 + view.getUint32(offset + 4);
      const headTf = view.getInt16(offset + 8);
      const bodyTf = view.getInt16(offset + 10);
      const headLength = view.getInt16(offset + 12);
      const bodyLength = view.getInt16(offset + 14);
      // The same operations in the same order as the SQL this replaced, so the same doubles.
      const f =
        (headWeight * headTf) / (1 - headB + (headB * headLength) / avgHead) +
        bodyTf / (1 - bodyB + (bodyB * bodyLength) / avgBody);
      scores.add(
        seq,
        sign * roundHalfEven(((factor * f) / (f + k1)) * scoreUnitsPerPoint),
        onlyExisting,
        headLength === 0,
      );
    }
  }
}

/** The limit-th best score (0 when there are fewer candidates). */
export function limitthBest(scores: ScoreTable, limit: number): number {
  if (scores.size < limit) return 0;
  // A min-heap of the best `limit` scores seen.
  const heap: number[] = [];
  const { keys, values } = scores;
  for (let slot = 0; slot < keys.length; slot++) {
    if (keys[slot] === 0) continue;
    const score = values[slot]!;
    if (heap.length < limit) {
      heap.push(score);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= heap[i]!) break;
        [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
        i = parent;
      }
    } else if (score > heap[0]!) {
      heap[0] = score;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && heap[left]! < heap[smallest]!) smallest = left;
        if (right < heap.length && heap[right]! < heap[smallest]!) smallest = right;
        if (smallest === i) break;
        [heap[smallest], heap[i]] = [heap[i]!, heap[smallest]!];
        i = smallest;
      }
    }
  }
  return heap[0]!;
}
