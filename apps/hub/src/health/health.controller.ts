import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ApiProblems } from '../http/problem-details.js';
import { DatabaseHealthIndicator } from './database.health.js';
import { RedisHealthIndicator } from './redis.health.js';

/** Liveness (the process answers) and readiness (its database and Redis answer). */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  @ApiProblems({
    503: 'The database or Redis does not answer: `details` says which (`status: "down"`).',
  })
  ready() {
    return this.health.check([() => this.database.isHealthy(), () => this.redis.isHealthy()]);
  }
}
