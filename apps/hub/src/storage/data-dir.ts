/**
 * The hub's files: content-addressed snapshots and datasets, and a scratch folder for uploads
 * and builds in progress. Files are written in `tmp/` and renamed into place (same file
 * system), so a reader never sees a partial file; a name is its SHA-256, so a file never changes.
 *
 * With several hub instances, the data directory must be shared storage (one volume mounted by
 * all), like the database.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';

@Injectable()
export class DataDir {
  readonly snapshots: string;
  readonly datasets: string;
  readonly tmp: string;

  constructor(@Inject(HUB_CONFIG) config: HubConfig) {
    this.snapshots = join(config.dataDir, 'snapshots');
    this.datasets = join(config.dataDir, 'datasets');
    this.tmp = join(config.dataDir, 'tmp');
    for (const dir of [this.snapshots, this.datasets, this.tmp])
      mkdirSync(dir, { recursive: true });
  }

  snapshotPath(sha256: string): string {
    return join(this.snapshots, `${sha256}.sqlite`);
  }

  datasetPath(sha256: string): string {
    return join(this.datasets, `${sha256}.txt`);
  }

  /** A fresh path in the scratch folder. */
  temporaryPath(suffix: string): string {
    return join(this.tmp, `${randomUUID()}${suffix}`);
  }

  /** Moves a finished scratch file to its content address (replacing an identical one). */
  async publish(temporary: string, destination: string): Promise<void> {
    await rename(temporary, destination);
  }

  async discard(path: string): Promise<void> {
    await rm(path, { force: true });
  }
}
