import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database, Queryable } from '../db/database.ts';
import { lockUntilCommit } from '../db/locks.ts';

/** Encrypts credentials at rest (API keys, OAuth secrets and tokens, bot tokens). */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

interface KeyRing {
  currentVersion: string;
  keys: Map<string, Buffer>;
}

/**
 * Parses `v2:<base64>,v1:<base64>` (first is current; older versions stay readable so keys can be
 * rotated) or a single base64 key, which becomes `v1`.
 */
export function parseKeyRing(text: string): KeyRing {
  const keys = new Map<string, Buffer>();
  let currentVersion: string | undefined;
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const separator = entry.indexOf(':');
    const version = separator > 0 ? entry.slice(0, separator) : 'v1';
    const key = Buffer.from(separator > 0 ? entry.slice(separator + 1) : entry, 'base64');
    // Not quoted: a key written where its version belongs ("<key>:v1") would be printed.
    if (!/^v\d+$/.test(version))
      throw new Error('each secret key version must look like v1, v2, ... ("v2:<base64 key>,v1:<base64 key>")');
    if (key.length !== 32) throw new Error(`secret key ${version} must be 32 bytes of base64 (got ${key.length})`);
    keys.set(version, key);
    currentVersion ??= version;
  }
  if (!currentVersion) throw new Error('ORGPLANE_SECRET_KEY holds no key');
  return { currentVersion, keys };
}

export function createSecretBox(keyRingText: string): SecretBox {
  const ring = parseKeyRing(keyRingText);
  return {
    seal(plain) {
      const key = ring.keys.get(ring.currentVersion)!;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        ring.currentVersion,
        iv.toString('base64url'),
        body.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
      ].join(':');
    },
    open(sealed) {
      const [version, iv, body, tag] = sealed.split(':');
      const key = version ? ring.keys.get(version) : undefined;
      if (!key || !iv || body === undefined || !tag)
        throw new Error('sealed secret is malformed or its key is unknown');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** The configured key ring, or one generated once into the data directory (mode 0600) and reused. */
export async function loadOrCreateKeyRing(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const file = path.resolve(dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const ring = `v1:${randomBytes(32).toString('base64')}`;
  // 'wx' fails if another process created it meanwhile; then that one's key is the key.
  try {
    await writeFile(file, `${ring}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(file, 0o600);
    return ring;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readFile(file, 'utf8')).trim();
  }
}

/** A key ring that does not match the keys this database's secrets were sealed with. */
export class KeyRingMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRingMismatchError';
  }
}

/** An HMAC of a fixed text under the key: tells keys apart, and says nothing about them. */
function keyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('orgplane secret key check').digest('hex');
}

/**
 * Holds the ring to the keys the database has seen (table secret_key_checks), and records its own.
 * Refuses a ring whose key of some version differs from the one recorded, or one that lacks a recorded
 * version: every process on one database must share the key ring, or each would seal secrets the
 * others cannot open, and a recorded version may still have secrets sealed with it. A ring with a new
 * version added (rotation) is accepted, and its new version recorded; from then on a ring without it
 * is refused. `orgplane secrets reseal` forgets an older version once nothing is sealed with it.
 */
export async function checkKeyRing(db: Database, keyRingText: string): Promise<void> {
  const ring = parseKeyRing(keyRingText);
  await db.transaction(async (tx) => {
    await lockUntilCommit(tx, 'secret_key_checks');
    const { rows } = await tx.query<{ version: string; fingerprint: string }>(
      // Newest first; versions recorded together (one ring at a first start), highest number first.
      'SELECT version, fingerprint FROM secret_key_checks ORDER BY created_at DESC, substr(version, 2)::int DESC',
    );
    const known = new Map(rows.map((row) => [row.version, row.fingerprint]));
    const advice =
      'every process on one database needs the same ORGPLANE_SECRET_KEY (without it, each generates its own DATA_DIR/secret.key)';
    for (const [version, key] of ring.keys) {
      const recorded = known.get(version);
      if (recorded !== undefined && recorded !== keyFingerprint(key)) {
        throw new KeyRingMismatchError(
          `The secret key ${version} is not the ${version} this database's secrets were sealed with: ${advice}.`,
        );
      }
    }
    if (known.size > 0 && ![...known.keys()].some((version) => ring.keys.has(version))) {
      throw new KeyRingMismatchError(
        `The secret key ring holds none of the key versions this database's secrets were sealed with (${[...known.keys()].sort().join(', ')}): ${advice}.`,
      );
    }
    // A ring without the newest recorded key (a configuration from before a rotation) could not open
    // what the other processes seal with it.
    const newest = rows[0]?.version;
    if (newest !== undefined && !ring.keys.has(newest)) {
      throw new KeyRingMismatchError(
        `The secret key ring lacks ${newest}, the newest key this database's secrets are sealed with: ${advice}.`,
      );
    }
    // A ring without an older recorded key could not open what is still sealed with it: the key may
    // leave the ring once `orgplane secrets reseal` has re-sealed everything and forgotten it.
    const missing = [...known.keys()].filter((version) => !ring.keys.has(version)).sort();
    if (missing.length > 0) {
      throw new KeyRingMismatchError(
        `The secret key ring lacks ${missing.join(', ')}, which this database's secrets may still be sealed with: keep it in ORGPLANE_SECRET_KEY until \`orgplane secrets reseal\` has re-sealed them under the newest key (it then forgets the old one).`,
      );
    }
    for (const [version, key] of ring.keys) {
      // An older version a ring still carries after it was retired (`orgplane secrets reseal`) is not
      // recorded again: nothing is sealed with it, and recorded it would be taken for the newest.
      if (!known.has(version) && (known.size === 0 || version === ring.currentVersion))
        await tx.query('INSERT INTO secret_key_checks (version, fingerprint) VALUES ($1, $2)', [
          version,
          keyFingerprint(key),
        ]);
    }
  });
}

/**
 * The secret box of a process on `db`: the configured key ring (or the one generated into DATA_DIR),
 * held to the keys the database has recorded (checkKeyRing) before it seals anything.
 */
export async function openSecretBox(db: Database, configured: string | undefined, dataDir: string): Promise<SecretBox> {
  const keyRing = await loadOrCreateKeyRing(configured, dataDir);
  await checkKeyRing(db, keyRing);
  return createSecretBox(keyRing);
}

/**
 * Columns of a module's table that hold SecretBox output, declared by the module that owns the table
 * (its index.ts) and gathered by the composition root, for `orgplane secrets reseal`.
 */
export interface SealedColumns {
  table: string;
  /** The columns that name one row, its tenant's first (`organization_id`, then the row's id). */
  key: readonly string[];
  /** Its sealed columns (nullable ones are skipped where empty). */
  columns: readonly string[];
}

/** The key version a sealed value was sealed under (`v2` of `v2:<iv>:<body>:<tag>`). */
export function sealedVersion(sealed: string): string {
  return sealed.slice(0, sealed.indexOf(':'));
}

/**
 * Forgets key versions older than the ring's current one (rows of secret_key_checks) for which
 * `stillSealed(version)` finds nothing: from then on a ring without them is accepted, and one with them
 * does not record them again (checkKeyRing). Returns the versions forgotten.
 */
export async function retireKeyVersions(
  db: Database,
  keyRingText: string,
  stillSealed: (tx: Queryable, version: string) => Promise<boolean>,
): Promise<{ retired: string[]; kept: string[] }> {
  const ring = parseKeyRing(keyRingText);
  const retired: string[] = [];
  const kept: string[] = [];
  await db.transaction(async (tx) => {
    // No process records or checks a ring meanwhile (checkKeyRing takes the same lock).
    await lockUntilCommit(tx, 'secret_key_checks');
    const { rows } = await tx.query<{ version: string }>('SELECT version FROM secret_key_checks ORDER BY version');
    for (const { version } of rows) {
      if (version === ring.currentVersion) continue;
      if (await stillSealed(tx, version)) {
        kept.push(version);
        continue;
      }
      await tx.query('DELETE FROM secret_key_checks WHERE version = $1', [version]);
      retired.push(version);
    }
  });
  return { retired, kept };
}
