import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ApiProblems } from '../http/problem-details.js';
import { DatabaseHealthIndicator } from './database.health.js';
import { RedisHealthIndicator } from './redis.health.js';

/** Terminus's answer; its own OpenAPI description would declare its 503 as plain JSON. */
const HEALTHY = {
  schema: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok'] },
      info: { type: 'object', additionalProperties: true },
      error: { type: 'object', additionalProperties: true },
      details: { type: 'object', additionalProperties: true },
    },
    required: ['status', 'details'],
  },
};
const Check = () => HealthCheck({ noCache: true, swaggerDocumentation: false });

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
  @Check()
  @ApiOkResponse({ ...HEALTHY, description: 'The process answers.' })
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @Check()
  @ApiOkResponse({ ...HEALTHY, description: 'The database and Redis answer.' })
  @ApiProblems({
    503: 'The database or Redis does not answer: `details` says which (`status: "down"`).',
  })
  ready() {
    return this.health.check([() => this.database.isHealthy(), () => this.redis.isHealthy()]);
  }
}
