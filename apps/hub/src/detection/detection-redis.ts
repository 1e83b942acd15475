/**
 * The detectors' Redis connection, and the counters on it. Commands fail fast while Redis is
 * away (detection skips that batch; the batch itself is already stored).
 */
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { WindowCounters } from './window-counters.js';

@Injectable()
export class DetectionRedis implements OnModuleDestroy {
  readonly redis: Redis;
  readonly counters: WindowCounters;

  constructor(@Inject(HUB_CONFIG) config: HubConfig) {
    this.redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: 1,
      connectionName: 'rampart-hub-detection',
    });
    this.redis.on('error', () => undefined); // reported by the detection that fails
    this.counters = new WindowCounters(this.redis);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
