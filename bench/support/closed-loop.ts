// Closed-loop latency: each of `workers` runs its step again as soon as the last one answered, for
// `seconds` after a 1 s warm-up; prints p50, p99, throughput and the statuses seen (so a refused call
// shows instead of passing for a fast one).

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** `makeWorker(i)` prepares worker i and returns its step, which makes one call and returns its status. */
export async function runClosedLoop(
  label: string,
  workers: number,
  seconds: number,
  makeWorker: (index: number) => Promise<() => Promise<number>>,
): Promise<void> {
  const steps = await Promise.all(Array.from({ length: workers }, (_, i) => makeWorker(i)));
  const warmUntil = performance.now() + 1000;
  await Promise.all(
    steps.map(async (step) => {
      while (performance.now() < warmUntil) await step();
    }),
  );
  const times: number[] = [];
  const statuses = new Map<number, number>();
  const until = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    steps.map(async (step) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const status = await step();
        times.push(performance.now() - t0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - began) / 1000;
  times.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(6);
  console.log(
    `${label.padEnd(40)} workers=${String(workers).padStart(2)}  p50 ${f(percentile(times, 50))} ms  p99 ${f(percentile(times, 99))} ms  ` +
      `${(times.length / elapsed).toFixed(0).padStart(5)} req/s  statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
}
