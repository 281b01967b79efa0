// Whether a statement stays on one tenant, read from PostgreSQL's own plan of it:
// on Citus a statement runs on one node when every distributed table it reads is pinned to one value of
// its distribution column, and a row lock (FOR UPDATE / SHARE / SKIP LOCKED) runs only there. The rules,
// checked on the plan (EXPLAIN (FORMAT JSON)) of each statement:
// - every scan of a distributed table has an equality on its distribution column: to a value, or to a
//   column of a table it is joined with (co-located joins pair the distribution columns);
// - a join condition never pairs a table distributed by organization with one distributed by user;
// - a row lock never covers a scan that breaks the first rule, whatever the statement; and the scans it
//   covers are pinned to a value, directly or by joins to scans that are: a join on the distribution
//   column alone (to a CTE's rows, or between two tables read whole) is co-located, but spans every shard.
// A few statements break a rule on purpose; they are listed below with their reason, and may not lock.
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { TABLE_CLASSES, isDistributed } from '../../src/db/distribution.ts';
import type { Queryable } from '../../src/db/database.ts';
import { captureStatements } from '../support/statement-capture.ts';
import { spoolStatements } from '../support/statement-spool.ts';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  'TID Cond'?: string;
  'Hash Cond'?: string;
  'Merge Cond'?: string;
  'Join Filter'?: string;
  Plans?: PlanNode[];
}

/** Statements that read across organizations on purpose (never with a lock), found by a piece of their text. */
export const DELIBERATE_FAN_OUT: readonly { signature: string; why: string }[] = [
  {
    signature: 'SELECT s.organization_id FROM audit_streams s WHERE',
    why: 'the audit stream workers find which organizations have a due stream (no lock); each is then leased by a statement that names it',
  },
  {
    signature: 'SELECT c.organization_id FROM messenger_connections c',
    why: 'the messenger delivery workers find which organizations have updates pending (no lock); each is then taken from by a statement that names it',
  },
  {
    signature: 'SELECT 1 FROM messenger_connections WHERE bot_id = $1 AND organization_id <> $2',
    why: 'a bot may serve one organization: connecting it checks that no other organization has it (no lock)',
  },
  {
    signature: 'SELECT DISTINCT chain_id FROM audit_events WHERE occurred_at < $1',
    why: 'audit retention (a minute after a worker process starts, then daily) finds which chains hold events past AUDIT_RETENTION_DAYS (no lock); each is then pruned by statements that name its chain',
  },
  {
    signature: 'SELECT m.user_id, m.organization_id, m.id FROM memories m',
    why: 'the memory expiry worker finds expired memories of every user (no lock); each is then deleted by statements that name its user',
  },
  {
    signature: 'SELECT c.organization_id FROM mcp_connections c',
    why: 'the MCP credential health job finds which organizations have a due connection (no lock); each is then claimed by a statement that names it',
  },
  {
    signature: '/* orgplane metrics: ',
    why: "/metrics counts instance-wide state at scrape time (queued and dead deliveries, streams' lag, credentials by health): one short read per metric, no lock, no tenant in its answer",
  },
  {
    signature: '/* orgplane admin: ',
    why: 'instance administration counts, lists and searches every person and organization (the overview, people, organizations, administrators): short reads, no lock',
  },
  {
    signature: '/* orgplane reseal: ',
    why: '`orgplane secrets reseal` finds the rows whose secrets are sealed under an older key, page by page (no lock); each row is then locked and re-sealed by a statement that names it',
  },
  // Secrets issued before tokens named their tenant (migration 0800) are found by their hash alone, in
  // every shard, until they are replaced; a token that names no tenant is looked up that way too. A
  // lock then names the tenant the read found (invitations/service.ts).
  ...['WHERE token_hash = $1', 'WHERE l.token_hash = $1', '($3::boolean OR'].map((signature) => ({
    signature,
    why: 'a secret issued before tokens named their tenant, found by its hash alone',
  })),
];

const distributionColumns = new Map(
  Object.entries(TABLE_CLASSES).flatMap(([table, kind]) =>
    isDistributed(kind) ? [[table, { column: kind.column, kind: kind.kind }] as const] : [],
  ),
);

const citusTables = Object.entries(TABLE_CLASSES).flatMap(([table, kind]) => (kind.kind === 'local' ? [] : [table]));

/** Every table a statement's text names that Citus would hold (distributed or reference). */
export function citusTablesIn(text: string): string[] {
  return citusTables.filter((table) => new RegExp(`\\b${table}\\b`).test(text));
}

/** Every distributed table a statement's text names (a cheap filter before planning it). */
export function distributedTablesIn(text: string): string[] {
  return [...distributionColumns.keys()].filter((table) => new RegExp(`\\b${table}\\b`).test(text));
}

const equalityOn = (column: string) =>
  new RegExp(`(^|[^\\w])(\\w+\\.)?${column}\\s*=|=\\s*(ANY\\s*\\()?\\(?(\\w+\\.)?${column}\\b`);

function conditionsOf(node: PlanNode): string[] {
  const own = [node['Index Cond'], node['Recheck Cond'], node.Filter, node['TID Cond']].filter((c): c is string => !!c);
  // A bitmap heap scan's index conditions sit on its Bitmap Index Scan children.
  if (node['Node Type'] === 'Bitmap Heap Scan') {
    const stack = [...(node.Plans ?? [])];
    while (stack.length) {
      const child = stack.pop()!;
      if (child['Index Cond']) own.push(child['Index Cond']);
      stack.push(...(child.Plans ?? []));
    }
  }
  return own;
}

// A distribution column equal to a literal or a parameter (EXPLAIN shows a custom plan's values inlined).
// One value: `= ANY(array)` names several, and Citus sends such a statement to each of their shards.
const VALUE = `\\(?(?:'|\\$\\d)`;
const valueEqualityOn = (column: string) =>
  new RegExp(`(^|[^\\w.])(\\w+\\.)?${column}\\s*=\\s*${VALUE}|'(::[\\w ]+)?\\)?\\s*=\\s*(\\w+\\.)?${column}\\b`);

/**
 * The aliases of distributed scans pinned to a value: by their own condition, or by an equality of
 * distribution columns with a scan that is.
 */
function valuePinnedAliases(root: PlanNode, aliases: Map<string, string>): Set<string> {
  const pinned = new Set<string>();
  const pairs: Array<[string, string]> = [];
  (function collect(node: PlanNode) {
    const own = node.Alias;
    const distributed = node['Relation Name'] ? distributionColumns.get(node['Relation Name']) : undefined;
    if (
      own &&
      distributed &&
      node['Node Type'] !== 'ModifyTable' &&
      conditionsOf(node).some((c) => valueEqualityOn(distributed.column).test(c))
    )
      pinned.add(own);
    const conditions = [node['Hash Cond'], node['Merge Cond'], node['Join Filter'], ...conditionsOf(node)].filter(
      (c): c is string => !!c,
    );
    for (const condition of conditions) {
      for (const [, left, leftColumn, right, rightColumn] of condition.matchAll(
        /(?:(\w+)\.)?(\w+) = (?:(\w+)\.)?(\w+)/g,
      )) {
        const [a, b] = [left ?? own, right ?? own];
        const onDistribution = (alias: string | undefined, column: string | undefined) =>
          !!alias && distributionColumns.get(aliases.get(alias) ?? '')?.column === column;
        if (a && b && a !== b && onDistribution(a, leftColumn) && onDistribution(b, rightColumn)) pairs.push([a, b]);
      }
    }
    for (const child of node.Plans ?? []) collect(child);
  })(root);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [a, b] of pairs) {
      for (const [from, to] of [
        [a, b],
        [b, a],
      ] as const) {
        if (pinned.has(from) && !pinned.has(to)) {
          pinned.add(to);
          grew = true;
        }
      }
    }
  }
  return pinned;
}

/** What breaks the rules in one statement's plan (empty when it stays on one tenant). */
export function routingProblems(root: PlanNode, options: { fanOutAllowed: boolean }): string[] {
  const problems: string[] = [];
  const aliases = new Map<string, string>();
  (function collect(node: PlanNode) {
    if (node['Relation Name'] && node.Alias) aliases.set(node.Alias, node['Relation Name']);
    for (const child of node.Plans ?? []) collect(child);
  })(root);
  const valuePinned = valuePinnedAliases(root, aliases);

  (function walk(node: PlanNode, joinConditions: string[], locked: boolean) {
    const joins = [node['Hash Cond'], node['Merge Cond'], node['Join Filter']].filter((c): c is string => !!c);
    const table = node['Relation Name'];
    // A join shows as a join node's condition, or (a nested loop) in the inner scan's own condition,
    // where this scan's columns are unqualified.
    for (const condition of [...joins, ...conditionsOf(node)]) {
      for (const [, left, right] of condition.matchAll(/(?:(\w+)\.)?\w+ = (?:(\w+)\.)?\w+/g)) {
        const [leftTable, rightTable] = [left ? aliases.get(left) : table, right ? aliases.get(right) : table];
        const [a, b] = [distributionColumns.get(leftTable ?? ''), distributionColumns.get(rightTable ?? '')];
        if (a && b && a.kind !== b.kind)
          problems.push(`joins ${leftTable} (by ${a.column}) to ${rightTable} (by ${b.column}): ${condition}`);
      }
    }
    const distributed = table ? distributionColumns.get(table) : undefined;
    if (distributed && node['Node Type'] !== 'ModifyTable') {
      const pinned = [...conditionsOf(node), ...joinConditions].some((condition) =>
        equalityOn(distributed.column).test(condition),
      );
      if (locked && !(pinned && node.Alias && valuePinned.has(node.Alias)))
        problems.push(`locks rows of ${table} without naming its ${distributed.column}`);
      else if (!pinned && !options.fanOutAllowed)
        problems.push(`reads ${table} without naming its ${distributed.column}`);
    }
    const inLock = locked || node['Node Type'] === 'LockRows';
    for (const child of node.Plans ?? []) walk(child, [...joinConditions, ...joins], inLock);
  })(root, [], false);
  return problems;
}

/** The problems of a statement as the database plans it with the parameters it was run with. */
export async function statementProblems(
  db: Queryable,
  statement: { text: string; values: unknown[] },
): Promise<string[]> {
  const fanOutAllowed = DELIBERATE_FAN_OUT.some((known) => statement.text.includes(known.signature));
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${statement.text}`,
    statement.values,
  );
  return routingProblems(rows[0]!['QUERY PLAN'][0].Plan, { fanOutAllowed });
}

/**
 * For a test file whose flows should be checked: records every statement from now on, and returns the
 * check to run in the file's last test, on the database the statements ran on. Statements of the test
 * itself are checked too, so a test's own SQL names its tenant like the app's, except those that start
 * with the comment `/* test *\/`: a test's look at a whole table (is a secret anywhere in it?).
 * The statements checked are also written to the statement spool when one is set (test/citus replays them).
 */
export function checkTenantRouting(): {
  assertStatementsStayOnOneTenant(db: Queryable, minimum: number): Promise<number>;
} {
  const capture = captureStatements();
  after(() => capture.stop());
  return {
    async assertStatementsStayOnOneTenant(db, minimum) {
      const queries = capture
        .statements()
        .filter((statement) => /^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b/i.test(statement.text));
      const statements = queries.filter((statement) => distributedTablesIn(statement.text).length > 0);
      // Kept for test/citus, which runs them on a Citus cluster (only Citus says which it refuses): these,
      // and those that name only reference tables (Citus has rules of its own for those too).
      await spoolStatements(queries.filter((statement) => citusTablesIn(statement.text).length > 0));
      assert.ok(
        statements.length >= minimum,
        `${statements.length} statements captured, fewer than the ${minimum} expected`,
      );
      const problems: string[] = [];
      for (const statement of statements) {
        const found = await statementProblems(db, statement).catch((error: Error) => [
          `could not be planned: ${error.message}`,
        ]);
        if (found.length > 0)
          problems.push(`${found.join('; ')}\n    in: ${statement.text.replace(/\s+/g, ' ').slice(0, 300)}`);
      }
      assert.deepEqual(
        problems,
        [],
        `${problems.length} of ${statements.length} statements leave their tenant:\n${problems.join('\n')}`,
      );
      return statements.length;
    },
  };
}
