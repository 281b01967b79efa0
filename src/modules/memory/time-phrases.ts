// Time phrases in a memory search's query: "yesterday", "last week", "in May", "3 days ago". One
// recognised phrase becomes a window on when memories happened (occurredAt, else their creation) and
// leaves the query's words. Days are UTC days; the window is [after, before).

export interface TimePhrase {
  /** The phrase as it appeared in the query. */
  phrase: string;
  after: Date;
  before: Date;
  /** The query without the phrase. */
  rest: string;
}

const day = 86_400_000;
const months = [
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
const numberWords: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

const startOfDay = (t: Date) => Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
const monthStart = (year: number, month: number) => new Date(Date.UTC(year, month, 1));

interface Rule {
  pattern: RegExp;
  window(match: RegExpExecArray, now: Date): [Date, Date] | undefined;
}

const rules: Rule[] = [
  { pattern: /\byesterday\b/i, window: (_, now) => [new Date(startOfDay(now) - day), new Date(startOfDay(now))] },
  { pattern: /\btoday\b/i, window: (_, now) => [new Date(startOfDay(now)), new Date(startOfDay(now) + day)] },
  {
    // "the day before yesterday" is not read; "N days/weeks/months ago" is the day, week or month N back.
    pattern: /\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month)s?\s+ago\b/i,
    window: (match, now) => {
      const word = match[1]!.toLowerCase();
      const n = numberWords[word] ?? Number(word);
      const unit = match[2]!.toLowerCase();
      if (unit === 'day') return [new Date(startOfDay(now) - n * day), new Date(startOfDay(now) - (n - 1) * day)];
      if (unit === 'week')
        return [new Date(startOfDay(now) - n * 7 * day), new Date(startOfDay(now) - (n - 1) * 7 * day)];
      return [
        monthStart(now.getUTCFullYear(), now.getUTCMonth() - n),
        monthStart(now.getUTCFullYear(), now.getUTCMonth() - n + 1),
      ];
    },
  },
  {
    // The seven days before today (not the calendar week: "last week" on a Monday means the days just gone).
    pattern: /\b(?:last|past|previous)\s+week\b/i,
    window: (_, now) => [new Date(startOfDay(now) - 7 * day), new Date(startOfDay(now))],
  },
  {
    pattern: /\bthis\s+week\b/i,
    window: (_, now) => [new Date(startOfDay(now) - 6 * day), new Date(startOfDay(now) + day)],
  },
  {
    pattern: /\b(?:last|previous)\s+month\b/i,
    window: (_, now) => [
      monthStart(now.getUTCFullYear(), now.getUTCMonth() - 1),
      monthStart(now.getUTCFullYear(), now.getUTCMonth()),
    ],
  },
  {
    pattern: /\bthis\s+month\b/i,
    window: (_, now) => [
      monthStart(now.getUTCFullYear(), now.getUTCMonth()),
      monthStart(now.getUTCFullYear(), now.getUTCMonth() + 1),
    ],
  },
  {
    pattern: /\b(?:last|previous)\s+year\b/i,
    window: (_, now) => [monthStart(now.getUTCFullYear() - 1, 0), monthStart(now.getUTCFullYear(), 0)],
  },
  {
    // "in May" is the last May up to now (this year's once it has begun), "in May 2025" that one. The
    // month is matched in any case except "may", which must be "May": "in may" is too often the verb.
    pattern:
      /\bin\s+(january|february|march|april|May|june|july|august|september|october|november|december)(?:\s+(\d{4}))?\b/i,
    window: (match, now) => {
      const name = match[1]!;
      if (name.toLowerCase() === 'may' && name !== 'May') return undefined;
      const month = months.indexOf(name.toLowerCase());
      const year = match[2]
        ? Number(match[2])
        : month <= now.getUTCMonth()
          ? now.getUTCFullYear()
          : now.getUTCFullYear() - 1;
      return [monthStart(year, month), monthStart(year, month + 1)];
    },
  },
];

/** The first time phrase of the query (in rule order), or null when it names none. */
export function readTimePhrase(q: string, now: Date): TimePhrase | null {
  for (const rule of rules) {
    const match = rule.pattern.exec(q);
    if (!match) continue;
    const window = rule.window(match, now);
    if (!window) continue;
    const rest = `${q.slice(0, match.index)} ${q.slice(match.index + match[0].length)}`.replace(/\s+/g, ' ').trim();
    return { phrase: match[0], after: window[0], before: window[1], rest };
  }
  return null;
}
