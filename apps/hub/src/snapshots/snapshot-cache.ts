/**
 * Snapshot bytes in memory, raw and gzipped, keyed by SHA-256.
 *
 * Many clients poll at once after a publish; each distinct file is read and compressed once
 * (concurrent requests share the same pending read), then served from memory. Content-addressed
 * entries never go stale; the least recently used are dropped past the byte budget.
 */
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Injectable } from '@nestjs/common';
import { DataDir } from '../storage/data-dir.js';

const gzipAsync = promisify(gzip);

export interface CachedSnapshot {
  readonly sha256: string;
  readonly raw: Buffer;
  readonly gzip: Buffer;
}

/** Bytes of raw + gzipped snapshots kept in memory. */
const BUDGET_BYTES = 512 * 1024 * 1024;

@Injectable()
export class SnapshotCache {
  private readonly entries = new Map<string, Promise<CachedSnapshot>>();
  private readonly sizes = new Map<string, number>();
  private total = 0;
  /** Files read from disk since start (what the burst test checks). */
  fileReads = 0;

  constructor(private readonly dataDir: DataDir) {}

  get(sha256: string): Promise<CachedSnapshot> {
    const pending = this.entries.get(sha256);
    if (pending) {
      this.entries.delete(sha256); // re-inserted: Map order is recency order
      this.entries.set(sha256, pending);
      return pending;
    }
    const loading = this.load(sha256);
    this.entries.set(sha256, loading);
    loading.then(
      (entry) => this.account(sha256, entry),
      () => this.entries.delete(sha256), // a failed read is retried by the next request
    );
    return loading;
  }

  /** What the cache holds and how often it went to disk (for the metrics endpoint). */
  stats(): { fileReads: number; entries: number; bytes: number } {
    return { fileReads: this.fileReads, entries: this.sizes.size, bytes: this.total };
  }

  private async load(sha256: string): Promise<CachedSnapshot> {
    this.fileReads++;
    const raw = await readFile(this.dataDir.snapshotPath(sha256));
    return { sha256, raw, gzip: await gzipAsync(raw, { level: 6 }) };
  }

  private account(sha256: string, entry: CachedSnapshot): void {
    const size = entry.raw.length + entry.gzip.length;
    this.sizes.set(sha256, size);
    this.total += size;
    for (const oldest of this.entries.keys()) {
      if (this.total <= BUDGET_BYTES || oldest === sha256) break;
      this.entries.delete(oldest);
      this.total -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}
