/**
 * A stand-in for the hub's client endpoints, for the benchmark only: it serves one snapshot
 * file at a time the way the hub does (`GET /v1/snapshot` with the site key, `If-None-Match`
 * answered with 304, `X-Rampart-Snapshot-Sha256` / `-Version` headers), and accepts report
 * batches (`POST /v1/reports`) and throws them away. `publish()` switches the file served, which
 * is what an operator's rule change followed by a hub build looks like to a client.
 *
 * It exists so the benchmark can make a client swap a 1.07M-range snapshot under load without
 * importing that data into a real hub first; the client under test is the real one.
 *
 * A real hub runs on other hosts: what it spends building and serving a snapshot is not the
 * client's cost. So the files are hashed when the stand-in starts, before any load, and the
 * server runs on a worker thread at the lowest priority (`bench-hub-server.ts`): on the
 * benchmark's two cores it then serves with the CPU the app and wrk leave.
 */

import { once } from 'node:events';
import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { sha256OfFile } from '../src/test-support/snapshot-dir.ts';
import type { Published } from './bench-hub-server.ts';

export interface BenchHub {
  readonly url: string;
  readonly siteKey: string;
  /** Serves the file given for `version` (1-based, in the order given at start) from now on. */
  publish(version: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the stand-in with `files[i]` as version `i + 1`; nothing is served until `publish`. */
export async function startBenchHub(siteKey: string, files: readonly string[]): Promise<BenchHub> {
  const versions: Published[] = [];
  for (const [i, file] of files.entries()) {
    versions.push({
      file,
      version: i + 1,
      sha256: await sha256OfFile(file),
      bytes: (await stat(file)).size,
    });
  }
  const worker = new Worker(new URL('./bench-hub-server.ts', import.meta.url), {
    workerData: { siteKey },
  });
  const [ready] = (await once(worker, 'message')) as [{ url: string }];
  return {
    url: ready.url,
    siteKey,
    async publish(version) {
      const published = versions[version - 1];
      if (published === undefined) throw new Error(`no snapshot file for version ${version}`);
      worker.postMessage({ publish: published });
      await once(worker, 'message');
    },
    close: async () => {
      await worker.terminate();
    },
  };
}
