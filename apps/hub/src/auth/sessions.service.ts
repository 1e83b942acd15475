/**
 * Operators' dashboard sessions. Logging in with the admin token gives a session token, which
 * travels only in an `HttpOnly`, `SameSite=Strict` cookie, and a CSRF token, which the dashboard
 * keeps in memory and sends as `X-CSRF-Token` with every state-changing request: a cookie alone
 * (what a forged cross-site request carries) never changes anything.
 *
 * Only the SHA-256 of a session token is stored, so a copy of the database opens no session.
 * Sessions end at a fixed expiry (`HUB_SESSION_HOURS` after login) or at logout; expired rows
 * are deleted at the next login.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { parseCookie } from 'cookie';
import type { Request } from 'express';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { secretsEqual, sha256Hex } from './secrets.js';

/** The cookie that carries the session token. */
export const SESSION_COOKIE = 'rampart_session';
/** The request header that carries the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

export interface Session {
  readonly csrfToken: string;
  readonly expiresAt: string;
}

export interface OpenedSession extends Session {
  /** The cookie's value; returned once, never stored. */
  readonly token: string;
}

@Injectable()
export class SessionsService {
  constructor(
    private readonly database: DatabaseService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  /** Opens a session if `adminToken` is the hub's admin token; undefined otherwise. */
  async open(adminToken: string, now = Date.now()): Promise<OpenedSession | undefined> {
    if (!secretsEqual(adminToken, this.config.adminToken)) return undefined;
    const token = randomBytes(32).toString('base64url');
    const session = {
      token,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(now + this.config.sessionHours * 3_600_000).toISOString(),
    };
    const db = this.database.db;
    await db
      .deleteFrom('sessions')
      .where('expires_at', '<=', new Date(now).toISOString())
      .execute();
    await db
      .insertInto('sessions')
      .values({
        token_hash: sha256Hex(token),
        csrf_token: session.csrfToken,
        created_at: new Date(now).toISOString(),
        expires_at: session.expiresAt,
      })
      .execute();
    return session;
  }

  /** The unexpired session whose token the request's cookie carries, if any. */
  async ofRequest(request: Request, now = Date.now()): Promise<Session | undefined> {
    const token = sessionToken(request);
    if (token === undefined) return undefined;
    const row = await this.database.db
      .selectFrom('sessions')
      .select(['csrf_token', 'expires_at'])
      .where('token_hash', '=', sha256Hex(token))
      .where('expires_at', '>', new Date(now).toISOString())
      .executeTakeFirst();
    return row && { csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  /** Ends the request's session (logout); a request without one changes nothing. */
  async close(request: Request): Promise<void> {
    const token = sessionToken(request);
    if (token === undefined) return;
    await this.database.db
      .deleteFrom('sessions')
      .where('token_hash', '=', sha256Hex(token))
      .execute();
  }
}

/** Whether `request` carries the CSRF token of `session` (compared in constant time). */
export function carriesCsrfToken(request: Request, session: Session): boolean {
  const presented = request.headers[CSRF_HEADER];
  return typeof presented === 'string' && secretsEqual(presented, session.csrfToken);
}

function sessionToken(request: Request): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  const token = parseCookie(header)[SESSION_COOKIE];
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
}
