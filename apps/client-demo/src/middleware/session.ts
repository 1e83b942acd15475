/**
 * Cookie sessions: the whole session lives in one signed cookie (no session store to run).
 *
 *     demo_session=<payload base64url>.<HMAC-SHA256(secret, payload) base64url>
 *
 * The payload is `{"u": userId | null, "c": csrfToken, "e": expiresAtSeconds}`. A cookie whose
 * signature does not verify, that does not parse or that has expired is ignored (a fresh,
 * anonymous session starts). The cookie is `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure`
 * when configured; it is written only when the session changed, just before the headers go out.
 *
 * Logging in rotates the CSRF token (so a token planted before login is worthless after it);
 * logging out clears the cookie. Being stateless, a copied cookie stays valid until it expires:
 * acceptable for a demo, and the reason the lifetime is bounded.
 */
import type { NextFunction, Request, Response } from 'express';
import { randomToken, safeEqual, sign } from '../security/tokens.js';

export const SESSION_COOKIE = 'demo_session';

export interface SessionOptions {
  readonly secret: string;
  readonly maxAgeSeconds: number;
  readonly secure: boolean;
}

interface Payload {
  u: number | null;
  c: string;
  e: number;
}

export class Session {
  private dirty = false;
  private cleared = false;

  constructor(private payload: Payload | null) {}

  get userId(): number | null {
    return this.payload?.u ?? null;
  }

  /** The CSRF token of this session, created (and the cookie scheduled) on first use. */
  csrfToken(): string {
    if (this.payload === null) {
      this.payload = { u: null, c: randomToken(), e: 0 };
      this.dirty = true;
    }
    return this.payload.c;
  }

  /** Constant-time check of a submitted form token. */
  verifyCsrf(submitted: unknown): boolean {
    return (
      this.payload !== null &&
      typeof submitted === 'string' &&
      submitted.length > 0 &&
      safeEqual(submitted, this.payload.c)
    );
  }

  /** Starts an authenticated session with a new CSRF token. */
  logIn(userId: number): void {
    this.payload = { u: userId, c: randomToken(), e: 0 };
    this.dirty = true;
    this.cleared = false;
  }

  logOut(): void {
    this.payload = null;
    this.cleared = true;
    this.dirty = false;
  }

  /** Writes or clears the cookie when something changed. */
  commit(res: Response, options: SessionOptions): void {
    const attributes = `; Path=/; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
    if (this.cleared) {
      res.append('Set-Cookie', `${SESSION_COOKIE}=${attributes}; Max-Age=0`);
      return;
    }
    if (!this.dirty || this.payload === null) return;
    this.payload.e = Math.floor(Date.now() / 1000) + options.maxAgeSeconds;
    const value = encode(this.payload, options.secret);
    res.append(
      'Set-Cookie',
      `${SESSION_COOKIE}=${value}${attributes}; Max-Age=${options.maxAgeSeconds}`,
    );
  }
}

declare global {
  namespace Express {
    interface Request {
      /** Present on page routes (see `routes.ts`). */
      session?: Session;
    }
  }
}

function encode(payload: Payload, secret: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

/** The verified, unexpired payload of a cookie value, or null. */
export function decode(value: string, secret: string): Payload | null {
  const dot = value.indexOf('.');
  if (dot <= 0) return null;
  const body = value.slice(0, dot);
  if (!safeEqual(value.slice(dot + 1), sign(secret, body))) return null;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload>;
    const validUser =
      parsed.u === null || (Number.isSafeInteger(parsed.u) && (parsed.u as number) > 0);
    if (!validUser || typeof parsed.c !== 'string' || parsed.c.length < 16) return null;
    if (typeof parsed.e !== 'number' || parsed.e * 1000 <= Date.now()) return null;
    return { u: parsed.u as number | null, c: parsed.c, e: parsed.e };
  } catch {
    return null;
  }
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Attaches `req.session`; the matching before-headers hook writes it back. */
export function sessionMiddleware(options: SessionOptions) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = readCookie(req.headers.cookie, SESSION_COOKIE);
    req.session = new Session(raw === undefined ? null : decode(raw, options.secret));
    next();
  };
}

export function sessionCommitHook(options: SessionOptions) {
  return (req: Request, res: Response): void => {
    req.session?.commit(res, options);
  };
}
