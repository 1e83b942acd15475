import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type { Request } from 'express';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { ApiProblems } from '../http/problem-details.js';
import { FailureLimiter } from './failure-limiter.js';
import { bearerToken, secretsEqual } from './secrets.js';
import { unauthorized } from './unauthorized.js';

/** Admits requests bearing the admin token (`Authorization: Bearer <HUB_ADMIN_TOKEN>`). */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
    private readonly failures: FailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const token = bearerToken(request.headers.authorization);
    if (token !== undefined && secretsEqual(token, this.config.adminToken)) return true;
    await this.failures.penalize(request.ip ?? 'unknown');
    throw unauthorized(context);
  }
}

/**
 * A controller or route for operators: the admin token is required, and the OpenAPI document
 * says so (security scheme `admin`, the 401 problem).
 */
export function AdminAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    UseGuards(AdminGuard),
    ApiBearerAuth('admin'),
    ApiProblems({ 401: 'Missing or invalid admin token.' }),
  );
}
