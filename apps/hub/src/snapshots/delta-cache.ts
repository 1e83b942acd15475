/**
 * Page deltas between retained snapshots of a site (`@rampart/rules-core/snapshot/page-delta`),
 * in memory, gzipped, keyed by (base, target) content hashes.
 *
 * Computing one reads and compares two whole files (tens of megabytes with the full datasets),
 * so it runs on a worker thread and only once per pair (concurrent requests share the pending
 * computation: after a publication, a whole fleet asks for the same delta at once). Like the
 * files, a delta never goes stale; the least recently used are dropped past the byte budget.
 */
import { Injectable } from '@nestjs/common';
import { DataDir } from '../storage/data-dir.js';
import { runWorker } from '../workers/run-worker.js';
import type { DeltaInput, DeltaMessage } from './delta-io.js';

export interface CachedDelta {
  /** The gzipped delta as served. */
  readonly gzip: Buffer;
  /** Bytes of the delta before compression. */
  readonly bytes: number;
  /** Pages it carries, and the new file's page count. */
  readonly pages: number;
  readonly pageCount: number;
}

const BUDGET_BYTES = 64 * 1024 * 1024;

@Injectable()
export class DeltaCache {
  private readonly entries = new Map<string, Promise<CachedDelta>>();
  private readonly sizes = new Map<string, number>();
  private total = 0;
  /** Deltas computed since start. */
  computed = 0;

  constructor(private readonly dataDir: DataDir) {}

  /** The delta turning snapshot `base` into `target` (both by SHA-256). */
  get(base: string, target: string): Promise<CachedDelta> {
    const key = `${base}>${target}`;
    const pending = this.entries.get(key);
    if (pending) {
      this.entries.delete(key);
      this.entries.set(key, pending);
      return pending;
    }
    const computing = this.compute(base, target);
    this.entries.set(key, computing);
    computing.then(
      (delta) => this.account(key, delta),
      () => this.entries.delete(key),
    );
    return computing;
  }

  stats(): { computed: number; entries: number; bytes: number } {
    return { computed: this.computed, entries: this.sizes.size, bytes: this.total };
  }

  private async compute(base: string, target: string): Promise<CachedDelta> {
    this.computed++;
    const input: DeltaInput = {
      basePath: this.dataDir.snapshotPath(base),
      baseSha256: base,
      targetPath: this.dataDir.snapshotPath(target),
      targetSha256: target,
    };
    const message = await runWorker<DeltaMessage>(
      new URL('./delta.worker.js', import.meta.url),
      input,
    );
    if (!message.ok) throw new Error(message.error);
    return { ...message.output, gzip: Buffer.from(message.output.gzip) };
  }

  private account(key: string, delta: CachedDelta): void {
    this.sizes.set(key, delta.gzip.length);
    this.total += delta.gzip.length;
    for (const oldest of this.entries.keys()) {
      if (this.total <= BUDGET_BYTES || oldest === key) break;
      this.entries.delete(oldest);
      this.total -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}
