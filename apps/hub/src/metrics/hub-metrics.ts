/**
 * The hub's metrics on the Prometheus endpoint (`@rampart/telemetry`), through the
 * OpenTelemetry metrics API (a no-op without the SDK):
 *
 * | instrument | Prometheus name | what |
 * | --- | --- | --- |
 * | `rampart.hub.queue.jobs` | `rampart_hub_queue_jobs{queue,state}` | BullMQ jobs by queue and state (waiting, active, delayed, failed), read at scrape time |
 * | `rampart.hub.report.batches` | `rampart_hub_report_batches_total{result}` | batches ingested: `stored`, or `duplicate` (a retried batch counted once) |
 * | `rampart.hub.report.events` | `rampart_hub_report_events_total` | events of stored batches: `rate()` is the ingestion rate |
 * | `rampart.hub.build.duration` | `rampart_hub_build_duration{outcome}` | snapshot builds in seconds (histogram; recorded by `builds/build.processor.ts`) |
 * | `rampart.hub.polls.held` | `rampart_hub_polls_held` | blocking polls held now |
 * | `rampart.hub.detection.findings` ... | `rampart_hub_detection_*_total` | detector findings, automatic blocks, failures |
 *
 * Queue depths cost Redis round trips, so they are read only when a scrape asks (bounded by a
 * timeout; a Redis that does not answer leaves the series out of that scrape).
 */
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type BatchObservableCallback, type Counter, metrics } from '@opentelemetry/api';
import type { Queue } from 'bullmq';
import { SNAPSHOT_BUILD_QUEUE } from '../builds/build-queue.constants.js';
import type { ReportBatch } from '../reports/report-batch.js';
import { REPORT_INGEST_QUEUE } from '../reports/report-queue.constants.js';
import { withTimeout } from '../time/with-timeout.js';
import { HubCounters } from './hub-counters.service.js';

const STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
const SCRAPE_TIMEOUT_MS = 1000;

@Injectable()
export class HubMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly meter = metrics.getMeter('@rampart/hub');
  private readonly batches: Counter = this.meter.createCounter('rampart.hub.report.batches', {
    description: 'Report batches ingested, by result (stored, or a duplicate of a stored one).',
  });
  private readonly events: Counter = this.meter.createCounter('rampart.hub.report.events', {
    description: 'Events of stored report batches.',
  });
  private stop: (() => void) | undefined;

  constructor(
    @InjectQueue(REPORT_INGEST_QUEUE) private readonly reports: Queue,
    @InjectQueue(SNAPSHOT_BUILD_QUEUE) private readonly buildQueue: Queue,
    private readonly counters: HubCounters,
  ) {}

  onModuleInit(): void {
    const jobs = this.meter.createObservableGauge('rampart.hub.queue.jobs', {
      description: 'BullMQ jobs by queue and state.',
    });
    const held = this.meter.createObservableGauge('rampart.hub.polls.held', {
      description: 'Blocking snapshot polls held by this instance now.',
    });
    const findings = this.meter.createObservableCounter('rampart.hub.detection.findings', {
      description: 'Findings of the attack detectors.',
    });
    const blocks = this.meter.createObservableCounter('rampart.hub.detection.blocks', {
      description: 'Automatic blocks the detectors created.',
    });
    const failures = this.meter.createObservableCounter('rampart.hub.detection.failures', {
      description: 'Batches the detectors skipped because Redis failed.',
    });
    const observables = [jobs, held, findings, blocks, failures];
    const callback: BatchObservableCallback = async (result) => {
      const counters = this.counters.read();
      result.observe(held, counters.heldPolls);
      result.observe(findings, counters.detectionFindings);
      result.observe(blocks, counters.automaticBlocks);
      result.observe(failures, counters.detectionFailures);
      for (const queue of [this.reports, this.buildQueue]) {
        const counts = await withTimeout(
          queue.getJobCounts(...STATES),
          SCRAPE_TIMEOUT_MS,
          'no answer',
        ).catch(() => undefined);
        if (counts === undefined) continue;
        for (const state of STATES)
          result.observe(jobs, counts[state] ?? 0, { queue: queue.name, state });
      }
    };
    this.meter.addBatchObservableCallback(callback, observables);
    this.stop = () => this.meter.removeBatchObservableCallback(callback, observables);
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /** A batch went through ingestion: stored, or recognised as one stored before. */
  ingested(batch: ReportBatch, stored: boolean): void {
    this.batches.add(1, { result: stored ? 'stored' : 'duplicate' });
    if (stored) this.events.add(batch.events.length);
  }
}
