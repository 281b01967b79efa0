// The embedded database (PGlite) is one process's database: it lives in that process's memory and
// writes its files without regard for anyone else. A second process opening the same directory
// would work on its own copy: its writes lost, or invisible to the first. So every process that opens
// a directory takes this lock first, for as long as it has the database open, and a process that
// finds it held by a live process refuses to start.
//
// The lock is a file beside the database directory (`DATA_DIR/pglite.lock`), created with O_EXCL and
// holding the owner's pid (and, on Linux, the owner's start time). A lock whose owner is gone (killed
// with SIGKILL, or the machine stopped) is stale: the next process removes it and takes the lock.
// Owner alive is judged by `process.kill(pid, 0)`; the start time tells a live process that merely
// reuses a dead owner's pid (common in containers, where orgplane is often pid 1 again after a restart).
// A pid means something only on the machine boot and in the pid namespace it came from, so the lock
// also names those (Linux). An owner in another container, or on another machine sharing the volume,
// cannot be checked that way: the owner refreshes the file's modification time while it lives, and
// such a lock is stale only once it has gone unrefreshed for STALE_AFTER_MS.
import { closeSync, openSync, readFileSync, readlinkSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { mkdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Another live process holds the embedded database directory. */
export class DataDirInUseError extends Error {
  readonly pid: number;
  readonly lockFile: string;
  constructor(dataDir: string, pid: number, lockFile: string) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${pid}; the embedded database serves one process: ` +
        `stop it first, or use the API / DATABASE_URL (lock file: ${lockFile})`,
    );
    this.name = 'DataDirInUseError';
    this.pid = pid;
    this.lockFile = lockFile;
  }
}

export interface DataDirLock {
  readonly lockFile: string;
  /** Gives the lock back (the file is removed when the last holder in this process releases it). */
  release(): void;
}

interface Owner {
  pid: number;
  /** Process start time in clock ticks since boot (Linux), when it could be read. */
  started: string | undefined;
  /** The machine boot and pid namespace the pid belongs to (Linux), when they could be read. */
  where: string | undefined;
}

/** How often a holder refreshes its lock file, and how long one from elsewhere may go unrefreshed. */
const HEARTBEAT_MS = 5_000;
const STALE_AFTER_MS = 30_000;

/** Locks held by this process: lock file -> holders (the CLI and the database it opens both hold it). */
const held = new Map<string, { content: string; holders: number; heartbeat: NodeJS.Timeout }>();
let exitHookInstalled = false;

/** The lock file of an embedded database directory. */
export function lockFileOf(pgliteDataDir: string): string {
  return `${path.resolve(pgliteDataDir)}.lock`;
}

/** Start time of a process (field 22 of /proc/<pid>/stat), or undefined where there is no procfs. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This machine's boot and this process's pid namespace (Linux), where a pid means something. */
function pidScope(): string | undefined {
  try {
    return `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return undefined;
  }
}
const ownPidScope = pidScope();

function parseOwner(text: string): Owner | undefined {
  const [pidLine, startedLine, whereLine] = text.split('\n');
  if (!pidLine || !/^[1-9][0-9]*$/.test(pidLine)) return undefined;
  return { pid: Number(pidLine), started: startedLine || undefined, where: whereLine || undefined };
}

function isAlive(owner: Owner, lockFile: string, ageMs: number): boolean {
  // From another container or machine boot: its pid says nothing here; its refreshes do.
  if (owner.where && ownPidScope && owner.where !== ownPidScope) return ageMs < STALE_AFTER_MS;
  // Our own pid in a lock we do not hold was left by an earlier process with the same pid.
  if (owner.pid === process.pid) return held.has(lockFile);
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = owner.started && startTimeOf(owner.pid);
  return !started || started === owner.started;
}

/** How long a lock file may stay empty (created, pid not yet written) before it is taken for stale. */
const UNWRITTEN_GRACE_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates `file` only if it does not exist, with `content`; false when it exists. */
function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

async function readOwner(lockFile: string): Promise<{ owner: Owner | undefined; ageMs: number } | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(lockFile, 'utf8'), stat(lockFile)]);
    return { owner: parseOwner(text), ageMs: Date.now() - info.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Refreshes the lock file's modification time while it is ours (it tells other containers we live). */
function startHeartbeat(lockFile: string, content: string): NodeJS.Timeout {
  const heartbeat = setInterval(() => {
    try {
      if (readFileSync(lockFile, 'utf8') === content) {
        const now = new Date();
        utimesSync(lockFile, now, now);
      }
    } catch {
      // gone: nothing to keep fresh
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return heartbeat;
}

/**
 * Removes a stale lock. Two processes may both find it stale; only one at a time may judge and remove
 * it, under a short-lived second lock, so that one of them cannot remove the lock the other has just
 * taken. That second lock is held for a few milliseconds; one older than 10 s was left by a process
 * that died holding it.
 */
async function removeIfStale(lockFile: string): Promise<void> {
  const breaker = `${lockFile}.break`;
  if (!createExclusive(breaker, `${process.pid}\n`)) {
    const age = await stat(breaker).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > 10_000) await unlink(breaker).catch(() => {});
    return;
  }
  try {
    const found = await readOwner(lockFile);
    const stale =
      found && (found.owner ? !isAlive(found.owner, lockFile, found.ageMs) : found.ageMs >= UNWRITTEN_GRACE_MS);
    if (stale) await unlink(lockFile).catch(() => {});
  } finally {
    await unlink(breaker).catch(() => {});
  }
}

function releaseAllAtExit() {
  for (const [lockFile, lock] of held) {
    clearInterval(lock.heartbeat);
    try {
      if (readFileSync(lockFile, 'utf8') === lock.content) unlinkSync(lockFile);
    } catch {
      // already gone
    }
  }
  held.clear();
}

/**
 * Takes the exclusive lock of the embedded database in `pgliteDataDir` for this process, or throws
 * DataDirInUseError naming the live process that holds it. Re-entrant within one process (counted);
 * released by `release()` or, at the latest, when the process exits. Creates nothing but the parent
 * directory, the lock file and, for a moment while a stale lock is judged, `<lock file>.break`.
 */
export async function lockDataDir(pgliteDataDir: string): Promise<DataDirLock> {
  const lockFile = lockFileOf(pgliteDataDir);
  const dataDir = path.dirname(lockFile);
  await mkdir(dataDir, { recursive: true });
  const started = startTimeOf(process.pid);
  const content = `${process.pid}\n${started ?? ''}\n${ownPidScope ?? ''}\n`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ours = held.get(lockFile);
    if (ours) {
      ours.holders += 1;
      break;
    }
    if (createExclusive(lockFile, content)) {
      held.set(lockFile, { content, holders: 1, heartbeat: startHeartbeat(lockFile, content) });
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.on('exit', releaseAllAtExit);
      }
      break;
    }
    const found = await readOwner(lockFile);
    if (held.has(lockFile)) continue;
    if (found?.owner && isAlive(found.owner, lockFile, found.ageMs))
      throw new DataDirInUseError(dataDir, found.owner.pid, lockFile);
    // No owner in it yet: a process is between creating the file and writing its pid, unless that
    // was long ago (it died in between, or someone emptied the file).
    if (found && !found.owner && found.ageMs < UNWRITTEN_GRACE_MS) {
      await sleep(20);
    } else if (found) {
      await removeIfStale(lockFile);
      await sleep(Math.random() * 20);
    }
    if (Date.now() > deadline)
      throw new Error(
        `could not take the lock ${lockFile} of DATA_DIR ${dataDir}; remove it if no orgplane process uses ${dataDir}`,
      );
  }
  let released = false;
  return {
    lockFile,
    release() {
      if (released) return;
      released = true;
      const lock = held.get(lockFile);
      if (!lock || --lock.holders > 0) return;
      held.delete(lockFile);
      clearInterval(lock.heartbeat);
      try {
        if (readFileSync(lockFile, 'utf8') === lock.content) unlinkSync(lockFile);
      } catch {
        // already gone
      }
    },
  };
}
