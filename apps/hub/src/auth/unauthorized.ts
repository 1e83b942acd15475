import { type ExecutionContext, UnauthorizedException } from '@nestjs/common';
import type { Response } from 'express';

/**
 * The one 401 of both guards, the same for every bad credential, with the scheme to use
 * (`WWW-Authenticate`, which RFC 9110 requires on a 401).
 */
export function unauthorized(context: ExecutionContext): UnauthorizedException {
  context.switchToHttp().getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer');
  return new UnauthorizedException('missing or invalid credentials');
}
