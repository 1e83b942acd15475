/**
 * Snapshot publications (and key revocations), told to every hub instance. The instance where
 * it happens wakes the polls it holds for that site at once, then announces it on a Redis
 * channel; every other instance wakes its own holds of that site when the message arrives. So a
 * fleet whose clients poll different hub instances learns of a new version together, and a
 * client whose key was revoked hears 401 on its next poll instead of after its wait.
 *
 * Redis is an accelerator here, not a dependency: while it is unreachable, announcements fail
 * (logged, throttled) and clients held by other instances learn of the version when their wait
 * ends, as with plain polling. The subscriber reconnects and resubscribes by itself.
 */
import { randomBytes } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { SnapshotWaits } from './snapshot-waits.js';

/** The Redis channel of publications (one for all sites; messages name the site). */
export const PUBLICATIONS_CHANNEL = 'rampart:snapshot-published';
const WARN_EVERY_MS = 60_000;

interface Announcement {
  readonly siteId: string;
  /** What happened, for logs: `version 7`, `a key was revoked`. */
  readonly what: string;
  /** The announcing instance, which has woken its own holds already. */
  readonly origin: string;
}

@Injectable()
export class PublicationChannel implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(PublicationChannel.name);
  private readonly origin = randomBytes(8).toString('hex');
  private readonly subscriber: Redis;
  private readonly publisher: Redis;
  private lastWarning = 0;
  /** Announcements received from other instances (for the metrics endpoint). */
  received = 0;

  constructor(
    @Inject(HUB_CONFIG) config: HubConfig,
    private readonly waits: SnapshotWaits,
  ) {
    this.subscriber = new Redis(config.redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      connectionName: 'rampart-hub-publications',
    });
    // Fails fast while Redis is away: an announcement is never worth waiting for.
    this.publisher = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectionName: 'rampart-hub-announce',
    });
    this.subscriber.on('error', (error) => this.warn(`subscriber: ${error.message}`));
    this.publisher.on('error', () => undefined); // reported where an announcement fails
    this.subscriber.on('message', (_channel, message) => this.onMessage(message));
  }

  onApplicationBootstrap(): void {
    // Queued until connected; ioredis resubscribes after every reconnect.
    void this.subscriber.subscribe(PUBLICATIONS_CHANNEL).catch((error: Error) => {
      this.warn(`cannot subscribe to ${PUBLICATIONS_CHANNEL}: ${error.message}`);
    });
  }

  onModuleDestroy(): void {
    // Answer every held poll before the HTTP server waits for its open requests to end.
    this.waits.close();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  /**
   * Ends this instance's and every other instance's held polls of `siteId`, which then answer
   * with what is current. `what` names the event for the logs.
   */
  async announce(siteId: string, what: string): Promise<void> {
    this.waits.wake(siteId);
    const message: Announcement = { siteId, what, origin: this.origin };
    try {
      if (this.publisher.status === 'wait' || this.publisher.status === 'end')
        await this.publisher.connect();
      await this.publisher.publish(PUBLICATIONS_CHANNEL, JSON.stringify(message));
    } catch (error) {
      this.warn(
        `could not announce ${what} of site ${siteId} to the other hub instances: ${(error as Error).message}`,
      );
    }
  }

  private onMessage(raw: string): void {
    let message: Partial<Announcement>;
    try {
      message = JSON.parse(raw) as Partial<Announcement>;
    } catch {
      return;
    }
    if (typeof message.siteId !== 'string' || message.origin === this.origin) return;
    this.received++;
    this.waits.wake(message.siteId);
  }

  private warn(text: string): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn(text);
  }
}
