/**
 * The background loop that keeps the snapshot current. Nothing here runs on the request path:
 * requests only read {@link ActiveSnapshot.current} and may call {@link SnapshotSync.nudge}.
 *
 * - Start: the snapshot named by `current.json` is verified (hash and `openSnapshot`) and used
 *   at once, then the hub is asked for anything newer. A pointer written under another site key
 *   is ignored (one data directory per site).
 * - Schedule: blocking polls (`syncWaitMs`, default 30 s ±10%): each poll names the snapshot in
 *   use and the hub holds it until it publishes a newer version, so a new version arrives about
 *   as soon as it is published; the next poll follows at once (after up to a second of jitter).
 *   The first poll at start is answered at once. Where the hub does not hold polls (a hub or a
 *   proxy that answers a poll well before its wait without saying it held it), or with
 *   `syncWaitMs: 0`, a poll every `syncIntervalMs` ±20% jitter, retrying blocking polls after
 *   {@link RETRY_BLOCKING_MS}; a hub that held too many (`busy`) also means one interval. Plus a
 *   poll after every `syncEveryRequests` requests (at most one per second, never while one runs).
 *   Polls never overlap.
 * - The lookup names the new version; its file is rebuilt from a page delta against the snapshot
 *   in use when the hub offers one (`syncDeltas`), else downloaded whole. A hub without the
 *   lookup is polled on `GET /v1/snapshot` instead, which sends the whole file.
 * - A new version is downloaded and verified (see `snapshot-download.ts`), opened with
 *   `openSnapshot` (SQLite magic, quick_check on the poll worker's thread, schema version, rules;
 *   range tables equal to those in use are shared, the others read on the poll worker's
 *   thread), renamed to its content address, recorded in `current.json` and swapped in. Old
 *   files beyond the retention count are pruned.
 * - Any failure keeps the snapshot in use, is counted and logged (throttled), and the next poll
 *   waits with exponential backoff and full jitter (from min(1 s, interval) up to
 *   `syncBackoffMaxMs`).
 * - 401/403: the key is wrong or revoked. Syncing stops and this is logged once, without the key;
 *   the snapshot in use stays in force.
 */
import { unlink } from 'node:fs/promises';
import { quickCheckOnWorker } from '@rampart/rules-core/snapshot/integrity-check';
import {
  openSnapshot,
  type Snapshot,
  SnapshotOpenError,
} from '@rampart/rules-core/snapshot/reader';
import type { RampartConfig } from '../config/options.js';
import { describeError, type GuardedLogger } from '../logging/logger.js';
import { backoffDelay, jittered } from '../retry/backoff.js';
import type { Stats } from '../stats/stats.js';
import type { ActiveSnapshot, InstalledSnapshot } from './active-snapshot.js';
import { PollWorker } from './poll-worker.js';
import { DownloadError, type FleetSize, type PollResult } from './snapshot-download.js';
import { type SnapshotStore, siteFingerprint } from './snapshot-store.js';

const MIN_NUDGE_SPACING_MS = 1000;
/** After the hub (or a proxy) did not hold a blocking poll: plain polling, then a new try. */
export const RETRY_BLOCKING_MS = 10 * 60_000;
/** A poll answered sooner than this share of its wait, not marked held, was not held. */
const HELD_SHARE = 0.5;
/** The longest pause before the next blocking poll (spreads a fleet woken together). */
const MAX_REPOLL_JITTER_MS = 1000;

import { recordRootSpan } from '../telemetry/waf-spans.js';
import { WAF_CLIENT_VERSION } from '../version.js';

const USER_AGENT = `rampart-waf-client/${WAF_CLIENT_VERSION}`;

export class SnapshotSync {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private lastPollAt = 0;
  private stopped = false;
  /** Until when polls are plain, because the hub or a proxy did not hold one (epoch ms). */
  private notHeldUntil = 0;
  /** False once the hub turned out not to have the version lookup. */
  private lookup = true;
  /** The live instances the hub counted in its last answer (sent back with the next poll). */
  private fleetSize: FleetSize = null;
  /** What the last poll asks of the next one: at once (`blocking`) or after an interval. */
  private next: 'blocking' | 'interval' = 'blocking';
  private readonly abort = new AbortController();
  private readonly site: string;
  /** Polls and downloads run off the main thread (see `poll-worker.ts`). */
  private readonly poller: PollWorker;

  constructor(
    private readonly config: RampartConfig,
    private readonly store: SnapshotStore,
    private readonly active: ActiveSnapshot,
    private readonly stats: Stats,
    private readonly logger: GuardedLogger,
    /** Hears the live-instance count of every answer that carries one (fleet-wide limits). */
    private readonly onFleetSize: (size: FleetSize) => void = () => {},
  ) {
    this.site = siteFingerprint(config.siteKey);
    this.poller = new PollWorker(store.dataDir);
  }

  /**
   * Prepares the data directory, installs the snapshot found on disk, polls the hub once and
   * starts the schedule. Resolves when a snapshot is in use or the first poll failed; never rejects.
   */
  async start(): Promise<void> {
    this.poller.warm(); // the worker boots while the data directory is prepared and read
    try {
      await this.store.prepare();
      await this.loadFromDisk();
    } catch (error) {
      this.stats.errors++;
      this.logger.error(
        `cannot use the data directory ${this.store.dataDir}: ${describeError(error)}`,
      );
    }
    if (this.stopped) return;
    await this.poll(0); // answered at once: `ready()` must not wait for a publication
    this.schedule();
  }

  /** Called on requests: polls early after `syncEveryRequests` requests (never while backing off). */
  nudge(): void {
    if (this.stopped || this.running || this.failures > 0) return;
    if (Date.now() - this.lastPollAt < MIN_NUDGE_SPACING_MS) return;
    clearTimeout(this.timer);
    // setImmediate: the poll starts after the current request is handled, not inside it.
    setImmediate(() => {
      void this.poll(0).then(() => this.schedule());
    }).unref();
  }

  /** Stops polling; an ongoing download is aborted (its temporary file removed). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
    await this.poller.close();
  }

  /** Whether the next poll may be a blocking one. */
  private get blocking(): boolean {
    return this.config.syncWaitMs > 0 && Date.now() >= this.notHeldUntil;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const blocking = this.failures === 0 && this.next === 'blocking' && this.blocking;
    this.stats.sync.pollMode = this.blocking ? 'blocking' : 'interval';
    const delay =
      this.failures > 0
        ? Math.max(
            50,
            backoffDelay(this.failures, {
              baseMs: Math.min(1000, this.config.syncIntervalMs),
              maxMs: Math.max(this.config.syncBackoffMaxMs, 100),
            }),
          )
        : blocking
          ? Math.random() * Math.min(MAX_REPOLL_JITTER_MS, this.config.syncWaitMs / 10)
          : jittered(this.config.syncIntervalMs);
    this.timer = setTimeout(() => {
      const waitMs = this.blocking ? jittered(this.config.syncWaitMs, 0.1) : 0;
      void this.poll(waitMs).then(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  /** One poll, held up to `waitMs` by the hub; concurrent callers share it. Never rejects. */
  private poll(waitMs: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.pollOnce(waitMs).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pollOnce(waitMs: number): Promise<void> {
    const startedAt = Date.now();
    this.lastPollAt = startedAt;
    const current = this.active.current;
    // Blocking polls follow each other at once unless this poll says otherwise.
    this.next = 'blocking';
    try {
      let result = await this.request(current, waitMs);
      if (result.kind === 'no_lookup') {
        this.lookup = false;
        this.logger.info(
          'the hub has no version lookup (GET /v1/snapshot/version): polling GET /v1/snapshot, whole files only',
        );
        result = await this.request(current, waitMs);
      }
      if ('poll' in result) {
        this.noteHolding(result.poll, waitMs, Date.now() - startedAt);
        this.fleetSize = result.fleetSize;
        this.onFleetSize(result.fleetSize);
      }
      switch (result.kind) {
        case 'not_modified':
          break;
        case 'no_lookup':
          throw new DownloadError('the hub answered 404 to GET /v1/snapshot as well');
        case 'unauthorized':
          this.stopped = true;
          this.stats.sync.unauthorized = true;
          this.stats.sync.failures++;
          this.logger.onlyOnce(
            'unauthorized',
            'error',
            `the hub refused the site key (HTTP ${result.status}); snapshot sync is stopped until restart. ` +
              `Check RAMPART_SITE_KEY / siteKey (the key is not logged). ` +
              (current
                ? `Snapshot version ${current.version} stays in use.`
                : 'No snapshot is loaded: the fail mode applies.'),
          );
          return;
        case 'present':
          await this.adopt(
            this.store.pathOf(result.sha256),
            result.sha256,
            result.version,
            'reused',
            startedAt,
          );
          break;
        case 'downloaded':
          this.stats.sync.downloads++;
          this.stats.sync.bytesDownloaded += result.bytes;
          if (result.via === 'delta') this.stats.sync.deltaDownloads++;
          if (result.deltaError !== null) {
            this.stats.sync.deltaFailures++;
            this.logger.throttled(
              'delta-failure',
              'warn',
              `the page delta to version ${result.version} was not usable (${result.deltaError}); downloaded the whole file`,
            );
          }
          await this.installDownload(result.tempPath, result.sha256, result.version, startedAt);
          break;
      }
      this.stats.sync.successes++;
      this.stats.sync.lastSuccessAt = Date.now();
      this.stats.sync.lastError = null;
      if (this.failures > 0)
        this.logger.info(`snapshot sync recovered after ${this.failures} failed attempt(s)`);
      this.failures = 0;
    } catch (error) {
      if (this.stopped) return; // aborted by stop()
      this.failures++;
      this.stats.sync.failures++;
      this.stats.sync.lastError = describeError(error);
      recordRootSpan(
        'rampart.snapshot.sync',
        startedAt,
        { 'rampart.sync.attempt': this.failures },
        error,
      );
      const kept = this.active.current;
      this.logger.throttled(
        'sync-failure',
        'warn',
        `snapshot sync failed (attempt ${this.failures}): ${describeError(error)}; ` +
          (kept
            ? `keeping snapshot version ${kept.version}`
            : 'no snapshot loaded yet, the fail mode applies'),
      );
    }
  }

  /** One poll on the poll worker's thread. */
  private request(current: InstalledSnapshot | null, waitMs: number): Promise<PollResult> {
    return this.poller.poll({
      hubUrl: this.config.hubUrl,
      siteKey: this.config.siteKey,
      instanceId: this.config.instanceId,
      current: current ? { sha256: current.sha256, version: current.version } : null,
      idleTimeoutMs: this.config.syncTimeoutMs,
      userAgent: USER_AGENT,
      waitMs,
      lookup: this.lookup,
      deltas: this.config.syncDeltas,
      fleetSize: this.fleetSize,
      signal: this.abort.signal,
    });
  }

  /**
   * Reads what a poll says about blocking polls: `busy` means one interval; an answer well before
   * its wait that the hub did not mark as held means that the hub, or a proxy in between, does
   * not hold polls: plain polling for {@link RETRY_BLOCKING_MS}.
   */
  private noteHolding(marker: 'held' | 'busy' | 'none', waitMs: number, tookMs: number): void {
    if (waitMs === 0) return;
    if (marker === 'busy') {
      this.stats.sync.busyPolls++;
      this.next = 'interval';
      return;
    }
    if (marker === 'none' && tookMs < waitMs * HELD_SHARE) {
      this.notHeldUntil = Date.now() + RETRY_BLOCKING_MS;
      this.next = 'interval';
      this.logger.onlyOnce(
        'not-held',
        'warn',
        `the hub (or a proxy in front of it) answered a blocking poll after ${tookMs} ms of ${Math.round(waitMs)}; polling every ${this.config.syncIntervalMs} ms instead, and trying again later`,
      );
    }
  }

  /**
   * Verifies a downloaded temporary file, moves it into place and swaps it in. `startedAt`: when
   * the poll that downloaded it began (epoch ms).
   */
  private async installDownload(
    tempPath: string,
    sha256: string,
    version: number,
    startedAt: number,
  ): Promise<void> {
    let snapshot: Snapshot;
    try {
      snapshot = await this.open(tempPath, version);
    } catch (error) {
      await unlink(tempPath).catch(() => undefined);
      throw error;
    }
    try {
      await this.store.publish(tempPath, sha256);
    } catch (error) {
      snapshot.close();
      await unlink(tempPath).catch(() => undefined);
      throw error;
    }
    await this.swap(snapshot, sha256, startedAt);
  }

  /**
   * Uses a snapshot file already in the data directory (found at start, or downloaded by another
   * process of this host): its hash is checked again, the file could have been damaged on disk.
   */
  private async adopt(
    path: string,
    sha256: string,
    version: number | null,
    how: 'reused' | 'disk',
    startedAt: number,
  ): Promise<void> {
    const actual = await this.store.hashFile(path);
    if (actual !== sha256) {
      await unlink(path).catch(() => undefined); // a damaged content-addressed file helps nobody
      throw new DownloadError(`${path} does not have the SHA-256 its name says; removed it`);
    }
    const snapshot = await this.open(path, version);
    if (how === 'reused') this.stats.sync.reused++;
    await this.swap(snapshot, sha256, startedAt);
  }

  private async open(path: string, expectedVersion: number | null): Promise<Snapshot> {
    let snapshot: Snapshot;
    try {
      // Range tables the new file shares with the snapshot in use (a rule-only change) are not
      // loaded again: no new table memory, so no garbage-collection pause under load.
      snapshot = await openSnapshot(path, {
        reuseTablesOf: this.active.current?.snapshot,
        // On the poll worker's thread, which is running anyway; a thread of its own only if
        // that worker died (not after stop(), which ends it: the open then fails, unused).
        integrityCheck: (file) =>
          this.poller
            .quickCheck(file)
            .catch(() => (this.stopped ? 'sync stopped' : quickCheckOnWorker(file))),
        // Also there: the tables a data change brings. Should that fail for any reason, they are
        // read here in steps after all, which also tells a damaged file from a dead worker.
        loadTables: (file, categories) =>
          this.poller.loadTables(file, categories).catch((error: unknown) => {
            if (this.stopped) throw error;
            return undefined;
          }),
      });
    } catch (error) {
      if (error instanceof SnapshotOpenError && !this.stopped)
        this.stats.sync.rejected[error.reason]++;
      throw error;
    }
    if (expectedVersion !== null && snapshot.version !== expectedVersion) {
      snapshot.close();
      this.stats.sync.rejected.invalid_content++;
      throw new DownloadError(
        `the snapshot file holds version ${snapshot.version}, the hub announced ${expectedVersion}`,
      );
    }
    return snapshot;
  }

  private async swap(snapshot: Snapshot, sha256: string, startedAt: number): Promise<void> {
    if (this.stopped) {
      snapshot.close();
      return;
    }
    const previous = this.active.current;
    const installed = this.active.install(snapshot, sha256);
    this.stats.snapshotVersion = installed.version;
    this.stats.sync.lastSwapMs = this.active.lastSwapMs;
    this.stats.sync.lastSwapStartedAt = startedAt;
    this.stats.sync.lastSwapAt = Date.now();
    recordRootSpan('rampart.snapshot.swap', startedAt, {
      'rampart.snapshot.version': installed.version,
      ...(previous === null ? {} : { 'rampart.snapshot.previous_version': previous.version }),
      'rampart.snapshot.rules': snapshot.rules.length,
      'rampart.snapshot.swap_ms': this.active.lastSwapMs,
    });
    this.logger.info(
      previous
        ? `snapshot version ${installed.version} in use (was ${previous.version}); ${snapshot.rules.length} rules`
        : `snapshot version ${installed.version} in use; ${snapshot.rules.length} rules`,
    );
    const pointer = await this.store.readPointer();
    if (pointer?.sha256 !== sha256 || pointer.site !== this.site) {
      await this.store
        .writePointer({ sha256, version: installed.version, site: this.site })
        .catch((error: unknown) => {
          this.logger.warn(`could not update ${this.store.pointerPath}: ${describeError(error)}`);
        });
    }
    // The previous file is among the newest others; a process still reading an unlinked file
    // keeps its inode, so pruning never breaks another process.
    await this.store.prune(new Set([sha256]), this.config.snapshotRetention);
  }

  private async loadFromDisk(): Promise<void> {
    const startedAt = Date.now();
    const pointer = await this.store.readPointer();
    if (!pointer) return;
    if (pointer.site !== this.site) {
      this.logger.warn(
        `${this.store.pointerPath} was written for another site key (or before a key rotation); ` +
          'not using it: give every site its own data directory',
      );
      return;
    }
    const path = this.store.pathOf(pointer.sha256);
    try {
      await this.adopt(path, pointer.sha256, null, 'disk', startedAt);
      this.stats.sync.loadedFromDisk = true;
    } catch (error) {
      this.logger.warn(
        `the snapshot named by ${this.store.pointerPath} cannot be used (${describeError(error)}); waiting for the hub`,
      );
    }
  }
}
