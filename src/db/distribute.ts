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
    super('this database has no citus extension: `orgplane distribute` runs on a Citus coordinator (CREATE EXTENSION citus first), and one PostgreSQL server needs nothing distributed');
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

/** The steps for every classified table of the schema, in an order Citus accepts; `local` tables have none. */
export async function distributionPlan(db: Queryable): Promise<DistributionStep[]> {
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
    if (TABLE_CLASSES[table]?.kind === 'reference') steps.push({ table, sql: `SELECT create_reference_table('${table}')` });
  }
  const anchors = new Map<string, string>();
  for (const table of ordered) {
    const found = TABLE_CLASSES[table];
    if (!found || !isDistributed(found)) continue;
    const anchor = anchors.get(found.kind);
    const colocateWith = anchor ?? 'none';
    if (!anchor) anchors.set(found.kind, table);
    steps.push({ table, sql: `SELECT create_distributed_table('${table}', '${found.column}', colocate_with => '${colocateWith}')` });
  }
  return steps;
}

/** Runs the plan on a Citus coordinator; refuses (CitusMissingError) a database without the extension. */
export async function distribute(db: Queryable): Promise<DistributionResult[]> {
  const { rows: citus } = await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
  if (citus.length === 0) throw new CitusMissingError();
  const { rows: known } = await db.query<{ name: string }>(`SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`);
  const already = new Set(known.map((row) => row.name));
  const results: DistributionResult[] = [];
  for (const step of await distributionPlan(db)) {
    if (already.has(step.table)) {
      results.push({ table: step.table, outcome: 'already a Citus table' });
      continue;
    }
    await db.query(step.sql);
    results.push({ table: step.table, outcome: TABLE_CLASSES[step.table]!.kind === 'reference' ? 'reference' : 'distributed' });
  }
  for (const [table, found] of Object.entries(TABLE_CLASSES)) {
    if (found.kind === 'local') results.push({ table, outcome: 'local' });
  }
  return results;
}
