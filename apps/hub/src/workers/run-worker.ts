import { parentPort, Worker } from 'node:worker_threads';

const RESULT = 'rampartWorkerResult';

/**
 * Runs a worker-thread script with `input` as its workerData and resolves with the result it
 * posts through {@link postResult}. CPU-heavy work (dataset parsing, snapshot builds) goes through
 * this so the hub's event loop keeps serving. Other messages are ignored: under `node --watch`,
 * Node itself posts module-loading notices from every thread.
 */
export function runWorker<Output>(script: URL, input: unknown): Promise<Output> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { workerData: input });
    let settled = false;
    worker.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null || !(RESULT in message)) return;
      settled = true;
      resolve((message as Record<typeof RESULT, Output>)[RESULT]);
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

/** Called inside a worker script started by {@link runWorker}: hands `result` back. */
export function postResult(result: unknown): void {
  parentPort?.postMessage({ [RESULT]: result });
}
