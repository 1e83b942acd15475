import { Worker } from 'node:worker_threads';

/**
 * Runs a worker-thread script with `input` as its workerData and resolves with the first
 * message it posts. CPU-heavy work (dataset parsing, snapshot builds) goes through this so the
 * hub's event loop keeps serving.
 */
export function runWorker<Output>(script: URL, input: unknown): Promise<Output> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { workerData: input });
    let settled = false;
    worker.once('message', (message: Output) => {
      settled = true;
      resolve(message);
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled)
        reject(new Error(`worker ${script.pathname} exited with code ${code} before answering`));
    });
  });
}
