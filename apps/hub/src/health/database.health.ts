import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DatabaseService } from '../database/database.service.js';
import { withTimeout } from '../time/with-timeout.js';

/** Ready only when a trivial query round-trips to the database in time. */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly database: DatabaseService,
  ) {}

  async isHealthy(key = 'database') {
    const indicator = this.health.check(key);
    try {
      await withTimeout(this.database.ping(), 1000, 'the database did not answer within 1000 ms');
      return indicator.up({ dialect: this.database.dialect });
    } catch (error) {
      return indicator.down({ dialect: this.database.dialect, message: (error as Error).message });
    }
  }
}
