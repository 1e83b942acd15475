/**
 * Worker-thread entry of a page delta (see `delta-cache.ts`): reads the two snapshot files and
 * compares them page by page off the hub's event loop, then gzips the delta. The files are the
 * hub's own content-addressed copies, so their hashes are known and not computed again.
 * Receives a {@link DeltaInput}, posts a {@link DeltaMessage}.
 */
import { readFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { encodePageDelta, readPageDeltaHeader } from '@rampart/rules-core/snapshot/page-delta';
import { postResult } from '../workers/run-worker.js';
import type { DeltaInput, DeltaMessage } from './delta-io.js';

const input = workerData as DeltaInput;
let message: DeltaMessage;
try {
  const delta = encodePageDelta(readFileSync(input.basePath), readFileSync(input.targetPath), {
    baseSha256: input.baseSha256,
    targetSha256: input.targetSha256,
  });
  const header = readPageDeltaHeader(delta);
  message = {
    ok: true,
    output: {
      gzip: gzipSync(delta, { level: 6 }),
      bytes: delta.length,
      pages: header.pages,
      pageCount: header.pageCount,
    },
  };
} catch (error) {
  message = { ok: false, error: (error as Error).message };
}
postResult(message);
