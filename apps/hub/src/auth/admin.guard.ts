import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiCookieAuth } from '@nestjs/swagger';
import type { Request } from 'express';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { ApiProblems } from '../http/problem-details.js';
import { FailureLimiter } from './failure-limiter.js';
import { bearerToken, secretsEqual } from './secrets.js';
import { carriesCsrfToken, SessionsService } from './sessions.service.js';
import { unauthorized } from './unauthorized.js';

/** Methods that change nothing, which a session may use without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Admits operators: scripts with the admin token (`Authorization: Bearer <HUB_ADMIN_TOKEN>`),
 * the dashboard with a session cookie (`sessions.service.ts`). A request with a session but
 * without its CSRF token may read, never write: 403.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
    private readonly failures: FailureLimiter,
    private readonly sessions: SessionsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const token = bearerToken(request.headers.authorization);
    if (token !== undefined) {
      if (secretsEqual(token, this.config.adminToken)) return true;
    } else {
      const session = await this.sessions.ofRequest(request);
      if (session) {
        if (SAFE_METHODS.has(request.method) || carriesCsrfToken(request, session)) return true;
        throw new ForbiddenException(
          'a session changes nothing without its CSRF token (X-CSRF-Token header)',
        );
      }
    }
    await this.failures.penalize(request.ip ?? 'unknown');
    throw unauthorized(context);
  }
}

/**
 * A controller or route for operators: the admin token or a dashboard session is required, and
 * the OpenAPI document says so (security schemes `admin` and `session`, the 401 and 403 problems).
 */
export function AdminAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    UseGuards(AdminGuard),
    ApiBearerAuth('admin'),
    ApiCookieAuth('session'),
    ApiProblems({
      401: 'Missing or invalid admin token or session.',
      403: 'A dashboard session without its CSRF token (only reading needs none).',
    }),
  );
}
