// Memory search on long conversations (LoCoMo dev set): recall@10 of the evidence turns, through the HTTP
// API, beside plain BM25 over the same turns. Usage:
//   node_modules/.bin/node bench/memory-conversations/run.ts [postgres] [pglite]   (default: postgres)
// The conversations are read at run time from ../shared/datasets/conversations-dev (or CONVERSATIONS_DIR);
// they are never copied into the product. Without them the benchmark says so and stops (exit 0).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const datasetDir =
  process.env.CONVERSATIONS_DIR ??
  path.resolve(new URL('../../', import.meta.url).pathname, '../shared/datasets/conversations-dev');

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface Question {
  question: string;
  evidence: string[];
  category: number;
}

interface Conversation {
  name: string;
  turns: { id: string; content: string; occurredAt: string; speaker: string }[];
  questions: Question[];
  /** When the last session took place: the questions are asked after the conversation. */
  end: string;
}

const monthNames = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** A session's date as the set writes it, "1:56 pm on 8 May, 2023", read as UTC (the set names no zone). */
function sessionDate(text: string): Date {
  const match = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\p{L}+),? (\d{4})$/iu.exec(text.trim());
  const month = match ? monthNames.indexOf(match[5]!.toLowerCase()) : -1;
  if (!match || month < 0) throw new Error(`a session date not understood: ${text}`);
  const hour = (Number(match[1]) % 12) + (match[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2])));
}

/** A turn as a memory: `[<session date>] <speaker>: <text>`, a shared photo's caption after the text. */
function turnContent(date: string, turn: Turn): string {
  const photo = turn.blip_caption ? ` [shares ${turn.blip_caption}]` : '';
  return `[${date}] ${turn.speaker}: ${turn.text}${photo}`;
}

function readConversations(): Conversation[] {
  const files = readdirSync(datasetDir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  return files.map((file) => {
    const raw = JSON.parse(readFileSync(path.join(datasetDir, file), 'utf8')) as Record<string, unknown>;
    const sessions = Object.keys(raw)
      .map((key) => /^session_(\d+)$/.exec(key)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const turns: Conversation['turns'] = [];
    let end = '';
    for (const n of sessions) {
      const date = raw[`session_${n}_date_time`] as string;
      end = sessionDate(date).toISOString();
      for (const turn of raw[`session_${n}`] as Turn[])
        turns.push({ id: turn.dia_id, content: turnContent(date, turn), occurredAt: end, speaker: turn.speaker });
    }
    // Categories 1-4; category 5 (adversarial) has no evidence, nor do a couple of others: nothing to find.
    const questions = (raw.qa as Question[]).filter((q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0);
    return { name: file.replace(/\.json$/, ''), turns, questions, end };
  });
}

/** The share of a question's evidence turns among the first 10 results (an evidence id naming no turn counts as missed). */
export function recallAt10(ranked: string[], evidence: string[]): number {
  const wanted = new Set(evidence);
  if (wanted.size === 0) return 0;
  const top = new Set(ranked.slice(0, 10));
  let found = 0;
  for (const id of wanted) if (top.has(id)) found++;
  return found / wanted.size;
}

/** Plain BM25 (k1 0.9, b 0.4, Lucene's idf) over the turns, the words given by `terms`. */
function bm25Rankings(
  turns: Conversation['turns'],
  questions: Question[],
  terms: (text: string) => string[],
): string[][] {
  const k1 = 0.9;
  const b = 0.4;
  const postings = new Map<string, [number, number][]>();
  const lengths: number[] = [];
  for (const [doc, turn] of turns.entries()) {
    const words = terms(turn.content);
    lengths.push(words.length);
    const tf = new Map<string, number>();
    for (const word of words) tf.set(word, (tf.get(word) ?? 0) + 1);
    for (const [word, count] of tf) {
      const list = postings.get(word) ?? [];
      list.push([doc, count]);
      postings.set(word, list);
    }
  }
  const avg = lengths.reduce((a, v) => a + v, 0) / lengths.length;
  return questions.map((q) => {
    const scores = new Float64Array(turns.length);
    for (const word of new Set(terms(q.question))) {
      const list = postings.get(word);
      if (!list) continue;
      const idf = Math.log(1 + (turns.length - list.length + 0.5) / (list.length + 0.5));
      for (const [doc, tf] of list)
        scores[doc]! += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]!) / avg));
    }
    return [...scores.keys()]
      .filter((doc) => scores[doc]! > 0)
      .sort((x, y) => scores[y]! - scores[x]! || x - y)
      .slice(0, 10)
      .map((doc) => turns[doc]!.id);
  });
}

const categoryNames: Record<number, string> = { 1: 'multi-session', 2: 'when', 3: 'inference', 4: 'single fact' };

class Tally {
  sum = 0;
  count = 0;
  add(value: number) {
    this.sum += value;
    this.count++;
  }
  toString() {
    return this.count === 0 ? '-' : (this.sum / this.count).toFixed(3);
  }
}

async function runOne(): Promise<void> {
  const { startTestApp, testBackend } = await import('../../test/support/app.ts');
  const { signUp } = await import('../../test/support/fixtures.ts');
  const { api } = await import('../../test/support/http.ts');
  const { terms } = await import('../../shared/memory-terms.ts');
  const conversations = readConversations();

  const app = await startTestApp({ logLevel: 'warn' });
  try {
    // BM25 twice: over words (lower-cased letter/digit runs, stop words out, no stemming: the README's
    // "plain BM25") and over the product's own terms (the same, stemmed with Porter2).
    const words = (text: string) =>
      (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => terms(word).length > 0);
    const newTallies = () => ({
      all: new Tally(),
      byCategory: new Map<number, Tally>(),
      byConversation: new Map<string, Tally>(),
    });
    const ours = newTallies();
    const bm25 = newTallies();
    const bm25Stemmed = newTallies();
    const tally = (into: typeof ours, conversation: string, category: number, value: number) => {
      into.all.add(value);
      if (!into.byCategory.has(category)) into.byCategory.set(category, new Tally());
      into.byCategory.get(category)!.add(value);
      if (!into.byConversation.has(conversation)) into.byConversation.set(conversation, new Tally());
      into.byConversation.get(conversation)!.add(value);
    };
    // The questions the search read a time phrase in, apart: their words left the query for a window.
    const withPhrase = Object.assign(new Tally(), { losing: 0 });
    const withoutPhrase = Object.assign(new Tally(), { losing: 0 });
    const digest = createHash('sha256');
    let searchMs = 0;
    let questionCount = 0;
    for (const conversation of conversations) {
      // One person per conversation: a question searches its own conversation only, and the bank's
      // statistics (document frequencies, feedback) are that conversation's.
      const user = await signUp(app.url, `conversation-${conversation.name}`);
      const client = api(app.url, user.token);
      const turnByMemory = new Map<string, string>();
      for (let i = 0; i < conversation.turns.length; i += 500) {
        const chunk = conversation.turns.slice(i, i + 500);
        const response = await client.post('/v1/memory/batch', {
          memories: chunk.map((turn) => ({
            content: turn.content,
            source: 'conversation',
            occurredAt: turn.occurredAt,
            speaker: turn.speaker,
          })),
        });
        if (response.status !== 201) throw new Error(`batch ${i}: ${response.status} ${response.text.slice(0, 300)}`);
        for (const [j, memory] of (response.body.memories as { id: string }[]).entries())
          turnByMemory.set(memory.id, chunk[j]!.id);
      }
      const baseline = bm25Rankings(conversation.turns, conversation.questions, words);
      const stemmed = bm25Rankings(conversation.turns, conversation.questions, terms);
      const start = performance.now();
      for (const [at, question] of conversation.questions.entries()) {
        const response = await client.get(
          `/v1/memory/search?limit=10&now=${conversation.end}&q=${encodeURIComponent(question.question)}`,
        );
        if (response.status !== 200) throw new Error(`search: ${response.status} ${response.text.slice(0, 300)}`);
        const results = response.body.results as { id: string; score: number }[];
        const ranked = results.map((result) => turnByMemory.get(result.id)!);
        digest.update(`${conversation.name}:${at}=${ranked.map((id, k) => `${id}:${results[k]!.score}`).join(',')}\n`);
        const recall = recallAt10(ranked, question.evidence);
        tally(ours, conversation.name, question.category, recall);
        const phrase = (response.body.time as { phrase: string } | null)?.phrase;
        const into = phrase ? withPhrase : withoutPhrase;
        into.add(recall);
        if (recall < 1) {
          into.losing++;
          if (phrase && process.env.SHOW_LOSSES)
            console.log(`  loses (${recall.toFixed(2)}), "${phrase}": ${question.question}`);
        }
        tally(bm25, conversation.name, question.category, recallAt10(baseline[at]!, question.evidence));
        tally(bm25Stemmed, conversation.name, question.category, recallAt10(stemmed[at]!, question.evidence));
      }
      searchMs += performance.now() - start;
      questionCount += conversation.questions.length;
    }
    console.log(
      `${testBackend}: recall@10 over ${ours.all.count} questions: memory search ${ours.all}, ` +
        `BM25 ${bm25.all} (stemmed ${bm25Stemmed.all})`,
    );
    for (const category of [...ours.byCategory.keys()].sort()) {
      const n = ours.byCategory.get(category)!;
      console.log(
        `  category ${category} (${categoryNames[category]}, ${n.count}): ${n}  ` +
          `BM25 ${bm25.byCategory.get(category)} (stemmed ${bm25Stemmed.byCategory.get(category)})`,
      );
    }
    for (const [name, n] of ours.byConversation) {
      console.log(
        `  ${name} (${n.count}): ${n}  BM25 ${bm25.byConversation.get(name)} (stemmed ${bm25Stemmed.byConversation.get(name)})`,
      );
    }
    for (const [name, n] of [
      ['with a time phrase', withPhrase],
      ['without', withoutPhrase],
    ] as const)
      console.log(`  ${name} (${n.count}): ${n}, ${n.losing} with recall below 1`);
    console.log(
      `  ${(searchMs / questionCount).toFixed(1)} ms per search (one at a time); results+scores digest ${digest.digest('hex').slice(0, 16)}`,
    );
  } finally {
    await app.close();
  }
}

if (process.env.MEMORY_CONVERSATIONS_CHILD) {
  await runOne();
} else if (!existsSync(datasetDir)) {
  console.log(`memory-conversations: skipped, no conversations at ${datasetDir} (set CONVERSATIONS_DIR)`);
} else {
  const backends = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['postgres'];
  for (const backend of backends) {
    const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname], {
      stdio: 'inherit',
      env: { ...process.env, MEMORY_CONVERSATIONS_CHILD: '1', ORGPLANE_TEST_BACKEND: backend },
    });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
}
