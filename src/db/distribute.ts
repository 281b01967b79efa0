// `orgplane distribute`: on a Citus coordinator, makes the tables what src/db/distribution.ts says they
// are. Reference tables first (distributed tables reference them), then every distributed table after
// the tables it references (Citus refuses a foreign key to a table not yet distributed), co-located
// with the first of its kind: one organization's rows of every tenant table on one node, one person's
// rows of every user table on one node. A table Citus already knows is left as it is, so a second run
// (or a run after a new migration added tables) only does what is missing.
import type { Queryable } from './database.ts';
import { TABLE_CLASSES, isDistributed } from './distribution.ts';

export class CitusMissingError extends Error {
  constructor() {
    super(
      'this database has no citus extension: `orgplane distribute` runs on a Citus coordinator (CREATE EXTENSION citus first), and one PostgreSQL server needs nothing distributed',
    );
    this.name = 'CitusMissingError';
  }
}

export interface DistributionStep {
  table: string;
  /** The statement that makes the table what its class says. */
  sql: string;
}

export interface DistributionResult {
  table: string;
  outcome: 'distributed' | 'reference' | 'already a Citus table' | 'local';
}

/**
 * The steps for every classified table of the schema, in an order Citus accepts; `local` tables have
 * none, nor do those Citus already has (`existing`). A table of a kind that Citus already distributes is
 * the one the kind's new tables are co-located with, so a run that completes an earlier one keeps one
 * organization's rows on one node.
 */
export async function distributionPlan(
  db: Queryable,
  existing: ReadonlySet<string> = new Set(),
): Promise<DistributionStep[]> {
  const { rows: edges } = await db.query<{ from: string; to: string }>(
    `SELECT t.relname AS from, r.relname AS to
       FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
      WHERE k.contype = 'f' AND t.relnamespace = 'public'::regnamespace AND t.oid <> r.oid`,
  );
  const references = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (!references.has(edge.from)) references.set(edge.from, new Set());
    references.get(edge.from)!.add(edge.to);
  }
  // Depth-first, referenced tables before their referencing ones; names sorted so the order is stable.
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (table: string) => {
    if (seen.has(table)) return;
    seen.add(table);
    for (const referenced of [...(references.get(table) ?? [])].sort()) visit(referenced);
    ordered.push(table);
  };
  const tables = Object.keys(TABLE_CLASSES).sort();
  for (const table of tables) visit(table);

  const steps: DistributionStep[] = [];
  for (const table of ordered) {
    if (TABLE_CLASSES[table]?.kind === 'reference' && !existing.has(table))
      steps.push({ table, sql: `SELECT create_reference_table('${table}')` });
  }
  const anchors = new Map<string, string>();
  for (const table of ordered) {
    const found = TABLE_CLASSES[table];
    if (found && isDistributed(found) && existing.has(table) && !anchors.has(found.kind))
      anchors.set(found.kind, table);
  }
  for (const table of ordered) {
    const found = TABLE_CLASSES[table];
    if (!found || !isDistributed(found) || existing.has(table)) continue;
    const anchor = anchors.get(found.kind);
    const colocateWith = anchor ?? 'none';
    if (!anchor) anchors.set(found.kind, table);
    steps.push({
      table,
      sql: `SELECT create_distributed_table('${table}', '${found.column}', colocate_with => '${colocateWith}')`,
    });
  }
  return steps;
}

/**
 * Runs the plan on a Citus coordinator, on one session (`session`: one connection, not a pool);
 * refuses (CitusMissingError) a database without the extension.
 */
export async function distribute(session: Queryable): Promise<DistributionResult[]> {
  const { rows: citus } = await session.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
  if (citus.length === 0) throw new CitusMissingError();
  // With this on (Citus's default), making `users` a reference table turns every table with a foreign
  // key to it into a "Citus local table", and Citus then refuses to distribute one that another such
  // table references (tried on Citus 13.2: mcp_connections, referenced by its members and teams).
  await session.query('SET citus.enable_local_reference_table_foreign_keys = off');
  await undoCitusLocalTables(session);
  const { rows: known } = await session.query<{ name: string }>(
    `SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`,
  );
  const already = new Set(known.map((row) => row.name));
  const results: DistributionResult[] = Object.keys(TABLE_CLASSES)
    .filter((table) => already.has(table))
    .map((table) => ({ table, outcome: 'already a Citus table' }));
  for (const step of await distributionPlan(session, already)) {
    await session.query(step.sql);
    results.push({
      table: step.table,
      outcome: TABLE_CLASSES[step.table]!.kind === 'reference' ? 'reference' : 'distributed',
    });
  }
  for (const [table, found] of Object.entries(TABLE_CLASSES)) {
    if (found.kind === 'local') results.push({ table, outcome: 'local' });
  }
  return results;
}

/**
 * Tables of the schema that an earlier run (with Citus's default above) left as Citus local tables:
 * made plain tables again, with the tables their foreign keys connect them to, so that this run gives
 * them their class. Reference tables undone with them are made again by the plan.
 */
async function undoCitusLocalTables(session: Queryable): Promise<void> {
  for (;;) {
    const { rows } = await session.query<{ name: string }>(
      `SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition
        WHERE partmethod = 'n' AND repmodel <> 't' AND logicalrelid::regclass::text = ANY($1) ORDER BY 1 LIMIT 1`,
      [Object.keys(TABLE_CLASSES)],
    );
    const local = rows[0]?.name;
    if (!local) return;
    await session.query('SELECT undistribute_table($1, cascade_via_foreign_keys => true)', [local]);
  }
}
