/**
 * Snapshot bytes in memory, raw and gzipped, keyed by SHA-256.
 *
 * Many clients poll at once after a publish; each distinct file is read once, and compressed once
 * when a client first asks for it gzipped (concurrent requests share the pending read or
 * compression), then served from memory: a fleet that fetches only a page delta never makes the
 * hub compress the whole file. Content-addressed entries never go stale; the least recently used
 * are dropped past the byte budget.
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
  /** The file gzipped, compressed on the first call and kept. */
  gzip(): Promise<Buffer>;
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
  /** Files compressed since start. */
  compressions = 0;

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
      (entry) => this.account(sha256, entry.raw.length),
      () => this.entries.delete(sha256), // a failed read is retried by the next request
    );
    return loading;
  }

  /** What the cache holds and how often it went to disk (for the metrics endpoint). */
  stats(): { fileReads: number; compressions: number; entries: number; bytes: number } {
    return {
      fileReads: this.fileReads,
      compressions: this.compressions,
      entries: this.sizes.size,
      bytes: this.total,
    };
  }

  private async load(sha256: string): Promise<CachedSnapshot> {
    this.fileReads++;
    const raw = await readFile(this.dataDir.snapshotPath(sha256));
    let gzipped: Promise<Buffer> | undefined;
    return {
      sha256,
      raw,
      gzip: () => {
        if (!gzipped) {
          this.compressions++;
          const compressing = gzipAsync(raw, { level: 6 });
          gzipped = compressing;
          compressing.then(
            (bytes) => this.account(sha256, bytes.length),
            () => {
              gzipped = undefined; // retried by the next request
            },
          );
        }
        return gzipped;
      },
    };
  }

  /** Adds `bytes` to the entry's size and drops the least recently used past the budget. */
  private account(sha256: string, bytes: number): void {
    if (!this.entries.has(sha256)) return; // dropped meanwhile
    this.sizes.set(sha256, (this.sizes.get(sha256) ?? 0) + bytes);
    this.total += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.total <= BUDGET_BYTES || oldest === sha256) break;
      this.entries.delete(oldest);
      this.total -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}
