/**
 * Worker-thread entry of a page delta (see `delta-cache.ts`): compares and hashes two snapshot
 * files off the hub's event loop, then gzips the delta. Receives a {@link DeltaInput}, posts a
 * {@link DeltaMessage}.
 */

import { workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { encodePageDelta, readPageDeltaHeader } from '@rampart/rules-core/snapshot/page-delta';
import { postResult } from '../workers/run-worker.js';
import type { DeltaInput, DeltaMessage } from './delta-io.js';

const input = workerData as DeltaInput;
let message: DeltaMessage;
try {
  const delta = encodePageDelta(input.base, input.target);
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
