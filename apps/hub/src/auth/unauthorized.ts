import { type ExecutionContext, UnauthorizedException } from '@nestjs/common';
import type { Response } from 'express';

/**
 * The one 401 of both guards, the same for every bad credential, with the scheme to use
 * (`WWW-Authenticate`, which RFC 9110 requires on a 401).
 */
export function unauthorized(context: ExecutionContext): UnauthorizedException {
  return unauthorizedOn(context.switchToHttp().getResponse<Response>());
}

/** {@link unauthorized} for a handler that holds the response itself, with its own detail. */
export function unauthorizedOn(
  response: Response,
  detail = 'missing or invalid credentials',
): UnauthorizedException {
  response.setHeader('WWW-Authenticate', 'Bearer');
  return new UnauthorizedException(detail);
}
