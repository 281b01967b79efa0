// What an operator alerts on, for /metrics: the state the database holds (delivery queues, dead letters,
// credential health), read when Prometheus scrapes, one short statement per metric; and the pool of this
// process. The reads count rows across every organization on purpose (an instance-wide figure, no tenant
// in it); test/db/tenant-routing.ts lists them as deliberate fan-outs by the comment each one carries.
// A read that fails (the database is away) leaves its metric out of that scrape rather than failing it.
import { Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.ts';

type Row = Record<string, number | string | null>;

interface StateMetric {
  gauge: Gauge;
  sql: string;
  set(gauge: Gauge, rows: Row[]): void;
}

const numberOf = (value: number | string | null | undefined) =>
  value === null || value === undefined ? 0 : Number(value);

/**
 * Registers the metrics; `refresh()` reads them, and /metrics calls it before each scrape is written. The
 * pool is looked at first, and the reads run one after another on one connection at a time, so a scrape
 * neither shows its own reads as pool use nor takes more than one connection.
 */
export function registerOperatorMetrics(registry: Registry, db: Database): { refresh(): Promise<void> } {
  const states: StateMetric[] = [];
  const stateGauge = (
    definition: { name: string; help: string; labelNames?: string[] },
    sql: string,
    set: (gauge: Gauge, rows: Row[]) => void,
  ) => {
    states.push({
      gauge: new Gauge({ ...definition, labelNames: definition.labelNames ?? [], registers: [registry] }),
      sql,
      set,
    });
  };

  stateGauge(
    {
      name: 'orgplane_messenger_deliveries_queued',
      help: 'Messenger updates waiting for delivery (queued or retrying)',
    },
    `SELECT count(*) AS n FROM messenger_updates /* orgplane metrics: messenger queue */ WHERE status IN ('queued', 'retrying')`,
    (gauge, rows) => gauge.set(numberOf(rows[0]?.n)),
  );
  stateGauge(
    {
      name: 'orgplane_messenger_oldest_due_delivery_age_seconds',
      help: 'How long the oldest messenger update that is due has waited past its due time (0 when none is due)',
    },
    `SELECT COALESCE(extract(epoch FROM now() - min(run_after)), 0)::float8 AS age FROM messenger_updates /* orgplane metrics: messenger oldest due */ WHERE status IN ('queued', 'retrying') AND run_after <= now()`,
    (gauge, rows) => gauge.set(numberOf(rows[0]?.age)),
  );
  stateGauge(
    { name: 'orgplane_messenger_deliveries_dead', help: 'Messenger updates dead-lettered (attempts exhausted)' },
    `SELECT count(*) AS n FROM messenger_updates /* orgplane metrics: messenger dead */ WHERE status = 'dead'`,
    (gauge, rows) => gauge.set(numberOf(rows[0]?.n)),
  );
  stateGauge(
    {
      name: 'orgplane_audit_stream_lag_seconds',
      help: 'Age of the oldest audit event an enabled, live audit stream has not delivered yet (0 when none waits)',
    },
    `SELECT COALESCE(extract(epoch FROM now() - min(first.occurred_at)), 0)::float8 AS lag
       FROM audit_streams s /* orgplane metrics: audit stream lag */
       CROSS JOIN LATERAL (SELECT e.occurred_at FROM audit_events e
                            WHERE e.chain_id = s.organization_id AND e.seq > s.cursor_seq
                            ORDER BY e.seq LIMIT 1) first
      WHERE s.enabled AND s.dead_at IS NULL`,
    (gauge, rows) => gauge.set(numberOf(rows[0]?.lag)),
  );
  stateGauge(
    { name: 'orgplane_audit_streams_dead', help: 'Audit streams dead-lettered (they stopped after repeated failures)' },
    'SELECT count(*) AS n FROM audit_streams /* orgplane metrics: audit streams dead */ WHERE dead_at IS NOT NULL',
    (gauge, rows) => gauge.set(numberOf(rows[0]?.n)),
  );
  stateGauge(
    {
      name: 'orgplane_mcp_credentials',
      help: 'MCP connection credentials by health (ready, unknown, reconnect_required)',
      labelNames: ['health'],
    },
    'SELECT health, count(*) AS n FROM mcp_connection_credentials /* orgplane metrics: mcp credentials */ GROUP BY health',
    (gauge, rows) => {
      // Every state is a series, 0 when no credential is in it: an alert on reconnect_required sees 0, not nothing.
      for (const health of ['ready', 'unknown', 'reconnect_required']) gauge.set({ health }, 0);
      for (const row of rows) gauge.set({ health: String(row.health) }, numberOf(row.n));
    },
  );
  const poolConnections = new Gauge({
    name: 'orgplane_db_pool_connections',
    help: "This process's database connections by state (in_use, idle)",
    labelNames: ['state'],
    registers: [registry],
  });
  const poolWaiting = new Gauge({
    name: 'orgplane_db_pool_waiting_requests',
    help: 'Requests of this process waiting for a database connection (the pool is exhausted)',
    registers: [registry],
  });
  return {
    async refresh() {
      poolConnections.set({ state: 'in_use' }, db.pool.totalCount - db.pool.idleCount);
      poolConnections.set({ state: 'idle' }, db.pool.idleCount);
      poolWaiting.set(db.pool.waitingCount);
      for (const state of states) {
        state.gauge.reset();
        try {
          state.set(state.gauge, (await db.query<Row>(state.sql)).rows);
        } catch {
          // Left out of this scrape: the database is away (/ready says so).
        }
      }
    },
  };
}
