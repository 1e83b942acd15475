/**
 * Child process of the lookup benchmark: loads one snapshot the way a client does and reports
 * what that cost, as one JSON line on stdout:
 * `{"rss_before_mb", "rss_after_mb", "rss_delta_mb", "max_stall_ms", "load_ms", "evaluator_ms",
 * "reload_max_stall_ms", "reload_ms", ...}`.
 *
 * It runs alone so that the memory figure is what a client holds for the snapshot and nothing
 * else: the harness itself keeps the whole dataset and the Wafris tables in memory. RSS is taken
 * after a full GC in a bare process (before any Rampart module is imported), then after the
 * snapshot is open, an evaluator is built on it and has answered one request, and a GC has run.
 * The stall figures cover `openSnapshot` and the evaluator's construction: once in the fresh
 * process (`max_stall_ms`, the strict figure, code not yet compiled), once more for a second load
 * into the warm process (`reload_max_stall_ms`, what a snapshot swap on a live server costs).
 *
 * Usage: `node --expose-gc bench/load-probe.ts <snapshot.sqlite>`
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

const MB = 1024 * 1024;

/** A full collection, twice with a turn between so finalizers and weak callbacks run. */
async function collect(gc: () => void): Promise<void> {
  gc();
  await nextTurn();
  gc();
}

type Modules = {
  readonly openSnapshot: typeof import('@rampart/rules-core/snapshot/reader').openSnapshot;
  readonly Evaluator: typeof import('@rampart/rules-core/evaluator/evaluator').Evaluator;
  readonly startStallMonitor: typeof import('./stall-monitor.ts').startStallMonitor;
};

/** Opens the snapshot and builds an evaluator on it, timing both and the longest stall. */
async function load(m: Modules, path: string) {
  const monitor = m.startStallMonitor();
  const started = performance.now();
  const snapshot = await m.openSnapshot(path);
  const loaded = performance.now();
  const evaluator = new m.Evaluator(snapshot);
  const built = performance.now();
  const maxStall = monitor.stop();
  return { snapshot, evaluator, maxStall, loadMs: loaded - started, evaluatorMs: built - loaded };
}

async function main(path: string | undefined): Promise<void> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('run with node --expose-gc');
  if (!path) throw new Error('usage: load-probe.js <snapshot.sqlite>');
  await collect(gc);
  const rssBefore = process.memoryUsage().rss;
  const modules: Modules = {
    openSnapshot: (await import('@rampart/rules-core/snapshot/reader')).openSnapshot,
    Evaluator: (await import('@rampart/rules-core/evaluator/evaluator')).Evaluator,
    startStallMonitor: (await import('./stall-monitor.ts')).startStallMonitor,
  };
  const { probeRequest } = await import('./worst-case-rules.ts');
  const first = await load(modules, path);
  first.evaluator.evaluate(probeRequest('192.0.2.1'));
  await collect(gc);
  const rssAfter = process.memoryUsage().rss;
  // Read after the measurement so the evaluator (and its caches) were alive during it.
  const version = first.evaluator.snapshotVersion;
  // A client swapping snapshots loads into a process whose code is already compiled: measure
  // that case too, with the first snapshot still serving, as during a swap.
  const reload = await load(modules, path);
  const report = {
    rss_before_mb: round(rssBefore / MB),
    rss_after_mb: round(rssAfter / MB),
    rss_delta_mb: round((rssAfter - rssBefore) / MB),
    max_stall_ms: round(first.maxStall),
    load_ms: round(first.loadMs),
    evaluator_ms: round(first.evaluatorMs),
    reload_max_stall_ms: round(reload.maxStall),
    reload_ms: round(reload.loadMs + reload.evaluatorMs),
    stored_ranges: first.snapshot.storedRangeCount,
    snapshot_version: version,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  reload.snapshot.close();
  first.snapshot.close();
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`load-probe: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
