// `orgplane secrets reseal`: re-encrypts every sealed secret under the newest key of the ring, so an
// older key can be taken out of ORGPLANE_SECRET_KEY. The owning modules declare their sealed columns
// (SealedColumns, gathered in composition.ts). Rows are found page by page across every organization
// (a deliberate fan-out, no lock), then each row is re-sealed in a small transaction of its own that
// locks it by its key: a run can stop anywhere and start again, and a row already under the newest
// key is left as it is. Only when nothing sealed under an older version remains is that version
// forgotten (secret_key_checks), so that a ring without it is accepted.
import type { Database, Queryable } from '../db/database.ts';
import {
  createSecretBox,
  parseKeyRing,
  retireKeyVersions,
  type SealedColumns,
  sealedVersion,
} from '../platform/secrets.ts';

export interface ResealCount {
  table: string;
  /** Rows whose secrets were re-sealed under the newest key. */
  resealed: number;
  /** Rows whose secrets could not be opened (their key is not in the ring, or they are damaged). */
  failed: number;
}

export interface ResealResult {
  currentVersion: string;
  tables: ResealCount[];
  /** Older versions forgotten: nothing is sealed under them any more. */
  retired: string[];
  /** Older versions still recorded: something sealed under them remains (a row that failed). */
  kept: string[];
}

const pageSize = 100;

// Identifiers come from the modules' declarations, never from input; quoted all the same.
const id = (name: string) => `"${name.replaceAll('"', '""')}"`;

export async function resealSecrets(
  db: Database,
  keyRingText: string,
  sealed: readonly SealedColumns[],
): Promise<ResealResult> {
  const { currentVersion } = parseKeyRing(keyRingText);
  const box = createSecretBox(keyRingText);
  const current = `${currentVersion}:%`;
  const tables: ResealCount[] = [];
  for (const spec of sealed) {
    const count: ResealCount = { table: spec.table, resealed: 0, failed: 0 };
    const keys = spec.key.map(id).join(', ');
    const older = spec.columns
      .map((column) => `(${id(column)} IS NOT NULL AND ${id(column)} NOT LIKE $1)`)
      .join(' OR ');
    const matchKey = spec.key.map((column, index) => `${id(column)} = $${index + 1}`).join(' AND ');
    let after: unknown[] | undefined;
    for (;;) {
      const afterClause = after ? ` AND (${keys}) > (${spec.key.map((_, index) => `$${index + 2}`).join(', ')})` : '';
      const { rows } = await db.query<Record<string, unknown>>(
        `SELECT ${keys} FROM ${id(spec.table)} /* orgplane reseal: rows under an older key */ WHERE (${older})${afterClause} ORDER BY ${keys} LIMIT ${pageSize}`,
        [current, ...(after ?? [])],
      );
      for (const row of rows) {
        const keyValues = spec.key.map((column) => row[column]);
        try {
          if (await resealRow(db, spec, matchKey, keyValues, currentVersion, box)) count.resealed += 1;
        } catch {
          // Its key is not in the ring or it is damaged: counted, and its version is kept below.
          count.failed += 1;
        }
      }
      if (rows.length < pageSize) break;
      after = spec.key.map((column) => rows.at(-1)![column]);
    }
    tables.push(count);
  }
  const { retired, kept } = await retireKeyVersions(db, keyRingText, (tx, version) =>
    anySealedUnder(tx, sealed, version),
  );
  return { currentVersion, tables, retired, kept };
}

/** Re-seals one row's older secrets, the row locked meanwhile; false when there was nothing to do. */
async function resealRow(
  db: Database,
  spec: SealedColumns,
  matchKey: string,
  keyValues: unknown[],
  currentVersion: string,
  box: ReturnType<typeof createSecretBox>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<Record<string, string | null>>(
      `SELECT ${spec.columns.map(id).join(', ')} FROM ${id(spec.table)} WHERE ${matchKey} FOR UPDATE`,
      keyValues,
    );
    const row = rows[0];
    // Gone since the page was read, or re-sealed by a run alongside: nothing to do.
    if (!row) return false;
    const changes = spec.columns.filter((column) => {
      const value = row[column];
      return value !== null && value !== undefined && sealedVersion(value) !== currentVersion;
    });
    if (changes.length === 0) return false;
    const values = changes.map((column) => box.seal(box.open(row[column]!)));
    const offset = keyValues.length;
    await tx.query(
      `UPDATE ${id(spec.table)} SET ${changes.map((column, index) => `${id(column)} = $${offset + index + 1}`).join(', ')} WHERE ${matchKey}`,
      [...keyValues, ...values],
    );
    return true;
  });
}

async function anySealedUnder(db: Queryable, sealed: readonly SealedColumns[], version: string): Promise<boolean> {
  for (const spec of sealed) {
    for (const column of spec.columns) {
      const { rows } = await db.query(
        `SELECT 1 FROM ${id(spec.table)} /* orgplane reseal: anything left under a version */ WHERE ${id(column)} LIKE $1 LIMIT 1`,
        [`${version}:%`],
      );
      if (rows.length > 0) return true;
    }
  }
  return false;
}
