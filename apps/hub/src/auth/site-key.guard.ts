import {
  applyDecorators,
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type { Request } from 'express';
import { DatabaseService } from '../database/database.service.js';
import { ApiProblems } from '../http/problem-details.js';
import { FailureLimiter } from './failure-limiter.js';
import { bearerToken, digestsEqual, sha256Hex, siteKeyId } from './secrets.js';
import { unauthorized } from './unauthorized.js';

/** What a valid site key tells a handler. */
export interface SitePrincipal {
  readonly siteId: string;
  readonly keyId: string;
}

type RequestWithSite = Request & { site?: SitePrincipal };

/**
 * Admits requests bearing a live site key. Unknown, malformed and revoked keys all get the same
 * 401 after the same lookup, so an answer never tells whether a site or key exists.
 */
@Injectable()
export class SiteKeyGuard implements CanActivate {
  constructor(
    private readonly database: DatabaseService,
    private readonly failures: FailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RequestWithSite>();
    const principal = await this.authenticate(bearerToken(request.headers.authorization));
    if (principal) {
      request.site = principal;
      return true;
    }
    await this.failures.penalize(request.ip ?? 'unknown');
    throw unauthorized(context);
  }

  private async authenticate(key: string | undefined): Promise<SitePrincipal | undefined> {
    const keyId = key === undefined ? undefined : siteKeyId(key);
    const row = await this.database.db
      .selectFrom('site_keys')
      .select(['site_id', 'secret_hash', 'revoked_at'])
      .where('id', '=', keyId ?? '')
      .executeTakeFirst();
    // Compare even when there is no row, so both paths cost the same.
    const matches = digestsEqual(sha256Hex(key ?? ''), row?.secret_hash ?? sha256Hex('absent'));
    if (!row || !matches || row.revoked_at !== null || keyId === undefined) return undefined;
    return { siteId: row.site_id, keyId };
  }
}

/** The site a request's key belongs to (only on routes behind {@link SiteKeyGuard}). */
export const CurrentSite = createParamDecorator(
  (_: unknown, context: ExecutionContext): SitePrincipal => {
    const site = context.switchToHttp().getRequest<RequestWithSite>().site;
    if (!site) throw unauthorized(context);
    return site;
  },
);

/**
 * A controller or route for WAF clients: a live site key is required, and the OpenAPI document
 * says so (security scheme `site-key`, the 401 problem).
 */
export function SiteKeyAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    UseGuards(SiteKeyGuard),
    ApiBearerAuth('site-key'),
    ApiProblems({ 401: 'Missing, unknown or revoked site key.' }),
  );
}
