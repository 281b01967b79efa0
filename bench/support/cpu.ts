// CPU time of processes, read from Linux's /proc: how a benchmark tells which process paid for a
// request when the server, PostgreSQL and the load generator share the machine's cores.
import { readdirSync, readFileSync } from 'node:fs';
import type { LoadResult } from './servers.ts';

const MICROSECONDS_PER_TICK = 10_000; // USER_HZ is 100 on Linux

/** User plus system CPU a process has used so far, in microseconds (undefined once it is gone). */
export function processCpuMicros(pid: number): number | undefined {
  try {
    // Fields after the command name, which may itself hold spaces: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MICROSECONDS_PER_TICK;
  } catch {
    return undefined;
  }
}

/** CPU used so far by every process named postgres on the machine (so: run on an otherwise quiet one). */
export function postgresCpuMicros(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('postgres'))
        total += processCpuMicros(Number(entry)) ?? 0;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

export interface CpuPerRequest {
  /** The server under test. */
  serverUs: number;
  /** Every postgres process (0 for a server that does not use it). */
  postgresUs: number;
  /** This process: the load generator. */
  loadGeneratorUs: number;
}

/** Runs `load` and divides the CPU each party used meanwhile by the requests it completed. */
export async function cpuPerRequest(
  serverPid: number,
  load: () => Promise<LoadResult>,
): Promise<LoadResult & { cpu: CpuPerRequest }> {
  const before = {
    server: processCpuMicros(serverPid) ?? 0,
    postgres: postgresCpuMicros(),
    own: processCpuMicros(process.pid) ?? 0,
  };
  const result = await load();
  const requests = Math.max(1, result.requests);
  const per = (micros: number) => Math.round(micros / requests);
  return {
    ...result,
    cpu: {
      serverUs: per((processCpuMicros(serverPid) ?? 0) - before.server),
      postgresUs: per(postgresCpuMicros() - before.postgres),
      loadGeneratorUs: per((processCpuMicros(process.pid) ?? 0) - before.own),
    },
  };
}
