/**
 * `/v1/session`: the dashboard's login and logout. Scripts keep using the admin token as a
 * bearer token and never need this.
 */
import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import type { CookieOptions, Request, Response } from 'express';
import { ApiProblems, JSON_BODY_PROBLEMS } from '../http/problem-details.js';
import { AdminAuth } from './admin.guard.js';
import { FailureLimiter } from './failure-limiter.js';
import { SESSION_COOKIE, type Session, SessionsService } from './sessions.service.js';
import { unauthorizedOn } from './unauthorized.js';

export class LoginDto {
  @ApiProperty({
    description: 'The hub admin token (HUB_ADMIN_TOKEN).',
    minLength: 1,
    maxLength: 4096,
  })
  @IsString()
  @Length(1, 4096)
  token!: string;
}

export class SessionView implements Session {
  @ApiProperty({ description: 'Send as `X-CSRF-Token` with every request that changes something.' })
  csrfToken!: string;

  @ApiProperty({ description: 'When the session ends (ISO 8601); log in again after.' })
  expiresAt!: string;
}

@ApiTags('session')
@Controller('v1/session')
export class SessionController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly failures: FailureLimiter,
  ) {}

  @Post()
  @ApiCreatedResponse({
    type: SessionView,
    description: 'Logged in: the session cookie (`rampart_session`, HttpOnly) is set.',
  })
  @ApiProblems(JSON_BODY_PROBLEMS, { 401: 'Not the admin token.' })
  async login(
    @Body() body: LoginDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SessionView> {
    const session = await this.sessions.open(body.token);
    if (!session) {
      await this.failures.penalize(request.ip ?? 'unknown');
      throw unauthorizedOn(response, 'not the admin token');
    }
    response.cookie(SESSION_COOKIE, session.token, {
      ...cookieOptions(request),
      expires: new Date(session.expiresAt),
    });
    return { csrfToken: session.csrfToken, expiresAt: session.expiresAt };
  }

  @Get()
  @AdminAuth()
  @ApiOkResponse({
    type: SessionView,
    description: 'The current session (a reloaded dashboard gets its CSRF token here).',
  })
  async current(
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SessionView> {
    const session = await this.sessions.ofRequest(request);
    // A bearer token is not a session: there is no cookie to protect, hence no CSRF token.
    if (!session) throw unauthorizedOn(response, 'no dashboard session');
    return session;
  }

  @Delete()
  @AdminAuth()
  @HttpCode(204)
  @ApiNoContentResponse({
    description: 'Logged out: the session is deleted and its cookie cleared.',
  })
  async logout(
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    await this.sessions.close(request);
    response.clearCookie(SESSION_COOKIE, cookieOptions(request));
  }
}

/**
 * `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it), the whole
 * hub as its path, and `Secure` unless the dashboard is reached on a loopback address: outside
 * loopback it must be served over HTTPS (behind a TLS proxy, with HUB_TRUST_PROXY=true).
 */
function cookieOptions(request: Request): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: !isLoopbackHost(request.hostname),
  };
}

function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '::1' ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
