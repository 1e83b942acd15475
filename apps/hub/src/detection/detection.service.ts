/**
 * Runs the detectors over each newly ingested batch (called by the ingestion worker once the
 * batch is stored; a retried batch is not inspected twice) and publishes what they find.
 *
 * Detection never fails the ingestion: the batch is already stored, so a failure (Redis away)
 * is logged, throttled, and that batch's observations are lost.
 */
import { Injectable, Logger } from '@nestjs/common';
import type { RateLimitRule } from '@rampart/rules-core/rules/model';
import type { ReportBatch } from '../reports/report-batch.js';
import type { Labeler } from '../reports/report-store.js';
import { AutomaticBlocksService } from './automatic-blocks.service.js';
import { DetectionRedis } from './detection-redis.js';
import { DetectionSettingsService } from './detection-settings.service.js';
import { detect, observe } from './detectors.js';

const WARN_EVERY_MS = 30_000;

@Injectable()
export class DetectionService {
  private readonly logger = new Logger(DetectionService.name);
  private lastWarning = 0;
  /** Batches inspected and blocks created, for the metrics endpoint. */
  readonly counts = { batches: 0, findings: 0, blocks: 0, failures: 0 };

  constructor(
    private readonly settings: DetectionSettingsService,
    private readonly blocks: AutomaticBlocksService,
    private readonly redis: DetectionRedis,
  ) {}

  async inspect(siteId: string, batch: ReportBatch, label: Labeler): Promise<void> {
    try {
      const now = Date.now();
      const settings = await this.settings.forDetection(siteId, now);
      const rules = await this.blocks.rulesOf(siteId, now);
      const rateLimitRules = rules.filter((r): r is RateLimitRule => r.type === 'rate_limit');
      const findings = await detect(observe(batch, label, settings), {
        siteId,
        settings,
        counters: this.redis.counters,
        rateLimitRules,
        now,
      });
      this.counts.batches++;
      this.counts.findings += findings.length;
      if (findings.length > 0)
        this.counts.blocks += (await this.blocks.apply(siteId, findings, label, now)).length;
    } catch (error) {
      this.counts.failures++;
      if (Date.now() - this.lastWarning > WARN_EVERY_MS) {
        this.lastWarning = Date.now();
        this.logger.warn(
          `detection skipped a batch of site ${siteId}: ${(error as Error).message} (${this.counts.failures} so far)`,
        );
      }
    }
  }
}
