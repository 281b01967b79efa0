// The real app on a real Citus cluster, for the tier's flows: a cluster of its own (test/support/citus-cluster.ts),
// `orgplane distribute` run on it as an operator runs it, then the server on the coordinator.
import { after, before } from 'node:test';
import type { Config } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { citusUnavailable, distributeOn, startCitusCluster, type CitusCluster } from '../support/citus-cluster.ts';
import { api } from '../support/http.ts';

export interface CitusApp {
  /** Why the tier cannot run here (pass it as the tests' `skip`), or undefined. */
  readonly skip: string | undefined;
  readonly cluster: CitusCluster;
  readonly app: TestApp;
  /** What `orgplane distribute` printed. */
  readonly distributed: string;
  /** Resolves once the app is up on the distributed schema (a file's own before() awaits it first). */
  readonly ready: Promise<void>;
  as(token?: string): ReturnType<typeof api>;
  /**
   * The errors the server logged (level error and above, and warnings that carry a database error), each
   * with its message and the database's: a statement Citus refuses answers 500 (or 503), and its reason is
   * only in the log.
   */
  serverErrors(): string[];
}

/**
 * An error, or a warning that carries a database's error (the messenger webhook answers 503 and logs the
 * reason as a warning: the platform retries).
 */
function isServerError(line: Record<string, unknown>): boolean {
  if (typeof line.level !== 'number') return false;
  const code = (line.err as { code?: unknown } | undefined)?.code;
  return line.level >= 50 || (line.level >= 40 && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code));
}

/** A log line's error, as text: the message, the SQLSTATE and what the database said. */
function describeError(line: Record<string, unknown>): string {
  const err = (line.err ?? line.error) as
    | { message?: string; code?: string; detail?: string; hint?: string }
    | undefined;
  const parts = [
    String(line.msg ?? ''),
    err?.code ? `SQLSTATE ${err.code}` : '',
    err?.message ?? '',
    err?.detail ?? '',
    err?.hint ?? '',
  ];
  const request = line.req as { method?: string; url?: string } | undefined;
  return `${request?.method ?? ''} ${request?.url ?? ''} ${parts.filter(Boolean).join(' | ')}`.trim();
}

/**
 * `config`: what differs from the test default, or a function that gives it once the cluster is up (to
 * start the parties the app talks to first and name their URLs).
 */
export function useCitusApp(config: Partial<Config> | (() => Promise<Partial<Config>>) = {}): CitusApp {
  const skip = citusUnavailable();
  let cluster: CitusCluster | undefined;
  let app: TestApp | undefined;
  let distributed = '';
  const started = Promise.withResolvers<void>();
  started.promise.catch(() => {});
  before(
    async () => {
      if (skip) return started.resolve();
      try {
        cluster = await startCitusCluster();
        distributed = await distributeOn(cluster);
        app = await startTestApp(typeof config === 'function' ? await config() : config, {
          databaseUrl: cluster.coordinatorUrl,
        });
        started.resolve();
      } catch (error) {
        started.reject(error);
        throw error;
      }
    },
    { timeout: 600_000 },
  );
  after(async () => {
    const errors = (app?.logLines ?? []).filter(isServerError);
    if (errors.length > 0)
      console.error(`the server logged ${errors.length} errors:\n${errors.map(describeError).join('\n')}`);
    // The app first: its pool and workers end while the servers under them still run.
    await app?.close();
    await cluster?.stop();
  });
  return {
    skip,
    get cluster() {
      if (!cluster) throw new Error(skip ?? 'the cluster starts in before(): use it inside a test or hook');
      return cluster;
    },
    get app() {
      if (!app) throw new Error(skip ?? 'the app starts in before(): use it inside a test or hook');
      return app;
    },
    get distributed() {
      return distributed;
    },
    ready: started.promise,
    as(token?: string) {
      return api(this.app.url, token);
    },
    serverErrors() {
      return (app?.logLines ?? []).filter(isServerError).map(describeError);
    },
  };
}
