/**
 * Re-asks for builds the queue may have lost: every site whose rules are ahead of both its
 * published snapshot and its last failed build gets a build request, at start and then
 * periodically. This is what makes "Redis was down when the rules changed" heal by itself.
 */
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { BuildQueueService } from './build-queue.service.js';

@Injectable()
export class BuildReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BuildReconciler.name);
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly database: DatabaseService,
    private readonly queue: BuildQueueService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.reconcile();
    this.timer = setInterval(() => void this.reconcile(), this.config.reconcileIntervalMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Requests a build for every site that needs one; returns how many were requested. */
  async reconcile(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      const behind = await this.database.db
        .selectFrom('sites')
        .select('id')
        .whereRef('rules_revision', '>', 'built_revision')
        .whereRef('rules_revision', '>', 'failed_revision')
        .execute();
      let requested = 0;
      for (const { id } of behind) {
        if (await this.queue.requestBuild(id, undefined, { reschedule: false })) requested++;
      }
      return requested;
    } catch (error) {
      this.logger.warn(`reconciliation failed: ${(error as Error).message}`);
      return 0;
    } finally {
      this.running = false;
    }
  }
}
