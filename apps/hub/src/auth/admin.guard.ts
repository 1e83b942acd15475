import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { FailureLimiter } from './failure-limiter.js';
import { bearerToken, secretsEqual } from './secrets.js';

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
    throw new UnauthorizedException('missing or invalid credentials');
  }
}
