/**
 * One prexy worker process per core (Node `cluster`): the connections spread over the workers,
 * and each worker also slices large bodies (see `sliced-substitution.ts`), so one heavy
 * response neither pins the machine nor stalls its own worker's other responses.
 *
 * The primary only supervises: it forks `workers` processes, forks a new one when one dies
 * (after a second, so a crash loop does not spin), relays `SIGHUP` (reload the configuration
 * file) and, on `SIGTERM`/`SIGINT`, asks every worker to finish its requests and exit.
 */
import cluster, { type Worker } from 'node:cluster';

const RESTART_DELAY_MS = 1000;

export const RELOAD = 'prexy:reload';
export const STOP = 'prexy:stop';

/** Runs the primary: forks and supervises `count` workers until told to stop. */
export function superviseWorkers(count: number, log: (message: string) => void): void {
  let stopping = false;
  const fork = (): Worker => cluster.fork();
  for (let i = 0; i < count; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    setTimeout(fork, RESTART_DELAY_MS).unref();
  });
  const each = (message: string) => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.send(message);
  };
  process.on('SIGHUP', () => each(RELOAD));
  const stop = () => {
    if (stopping) return;
    stopping = true;
    each(STOP);
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
