import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { withTimeout } from '../time/with-timeout.js';

/**
 * Ready only when Redis answers PING in time. The management API keeps working without Redis;
 * readiness reports it so an operator sees that builds are stalled. Uses its own connection that
 * fails fast (no offline queue), so a check never waits for a reconnect.
 */
@Injectable()
export class RedisHealthIndicator implements OnModuleDestroy {
  private readonly redis: Redis;

  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(HUB_CONFIG) config: HubConfig,
  ) {
    this.redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectionName: 'rampart-hub-health',
    });
    this.redis.on('error', () => undefined); // reported through the check, not as unhandled errors
  }

  async isHealthy(key = 'redis') {
    const indicator = this.health.check(key);
    try {
      if (this.redis.status === 'wait' || this.redis.status === 'end')
        await this.redis.connect().catch(() => undefined);
      await withTimeout(this.redis.ping(), 1000, 'Redis did not answer PING within 1000 ms');
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
