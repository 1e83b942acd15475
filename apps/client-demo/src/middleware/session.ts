/**
 * Cookie sessions with `cookie-session` (expressjs): the whole session lives in one signed cookie,
 * so there is no session store to run and every instance sharing the secret accepts it.
 *
 *     demo_session=<base64 JSON>          the session: { userId?, csrfToken?, expiresAt }
 *     demo_session.sig=<HMAC-SHA256>      of "demo_session=<value>" under the secret (Keygrip)
 *
 * The contract, on top of what the library does:
 * - **Signed, or ignored.** A cookie without its `.sig` or whose signature does not verify
 *   (constant-time, in Keygrip) is not read at all; the request starts a fresh, anonymous session.
 *   Keygrip signs with SHA-1 unless told otherwise; it is given SHA-256 here.
 * - **The expiry is inside the signed session** (`expiresAt`, seconds since the epoch), checked on
 *   every request by `checkSessionExpiry`. The cookie's own `Expires` only tells the browser when
 *   to drop it: a copied cookie replayed after the lifetime is refused here, whatever its
 *   attributes say. A session whose fields do not have the expected types, or whose expiry lies
 *   further ahead than the configured lifetime allows (issued under a longer one), is refused too.
 * - **Written only when changed**, just before the headers go out (`cookie-session` compares the
 *   serialized session with what it read). A fresh session that nothing stored anything in writes
 *   no cookie: anonymous page views without a form get none. The lifetime starts when something
 *   is first stored (`liveSession`: the log-in form's CSRF token) and again at log-in; it is not
 *   extended by use.
 * - **Log-in replaces the session** (`logIn`): nothing planted before it (a CSRF token, a user id)
 *   survives it; the caller also rotates the CSRF token at once (see `csrf.ts`).
 * - **Log-out clears the cookie** (`logOut`: `demo_session=` and its `.sig`, expired in 1970).
 *   Being stateless, a copy of a cookie taken before log-out stays valid until its `expiresAt`:
 *   acceptable for a demo, and the reason the lifetime is bounded.
 * - `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` when configured. The cookie library refuses
 *   to write a `Secure` cookie on a request that did not arrive over HTTPS (and `cookie-session`
 *   swallows that error, which would make log-in silently do nothing); `liveSession`, `logIn`
 *   and `logOut` throw instead, so the misconfiguration shows as a logged 500. Behind a proxy that
 *   terminates TLS, set `DEMO_TRUST_PROXY` so that `X-Forwarded-Proto: https` counts.
 */
import cookieSession from 'cookie-session';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import Keygrip from 'keygrip';

export const SESSION_COOKIE = 'demo_session';

export interface SessionOptions {
  readonly secret: string;
  readonly maxAgeSeconds: number;
  readonly secure: boolean;
}

declare global {
  namespace CookieSessionInterfaces {
    /** What this app stores in the session (`checkSessionExpiry` has checked these types). */
    interface CookieSessionObject {
      /** The signed-in user; absent for an anonymous session. */
      userId?: number;
      /** The synchronizer token of `csrf.ts` (written by csrf-sync's `storeTokenInState`). */
      csrfToken?: string;
      /** Seconds since the epoch after which the session is refused. */
      expiresAt?: number;
    }
  }
}

export type SessionData = CookieSessionInterfaces.CookieSessionObject;

/** The page routes' session handling: the library's cookie session, then the expiry check. */
export function sessionMiddleware(options: SessionOptions): RequestHandler[] {
  return [
    cookieSession({
      name: SESSION_COOKIE,
      keys: new Keygrip([options.secret], 'sha256'),
      maxAge: options.maxAgeSeconds * 1000,
      httpOnly: true,
      sameSite: 'lax',
      secure: options.secure,
      path: '/',
    }),
    checkSessionExpiry,
  ];
}

/**
 * Replaces a session read from the cookie that has expired, or is not what this app writes, with
 * a fresh anonymous one (which, like any fresh session, writes no cookie unless used).
 */
export function checkSessionExpiry(req: Request, _res: Response, next: NextFunction): void {
  const session = req.session;
  if (session && !session.isNew && !isValid(session, maxAgeSeconds(req), Date.now())) {
    req.session = {};
  }
  next();
}

function isValid(session: SessionData, lifetimeSeconds: number, nowMs: number): boolean {
  const { userId, csrfToken, expiresAt } = session;
  const nowSeconds = nowMs / 1000;
  return (
    (userId === undefined || (Number.isSafeInteger(userId) && userId > 0)) &&
    (csrfToken === undefined || typeof csrfToken === 'string') &&
    typeof expiresAt === 'number' &&
    expiresAt > nowSeconds &&
    expiresAt <= nowSeconds + lifetimeSeconds + 1 // the 1 s: expiresAt is rounded up
  );
}

/** The signed-in user's id, or null. */
export function sessionUserId(req: Request): number | null {
  return req.session?.userId ?? null;
}

/**
 * The session to store something in: the current one, or a fresh one when there is none yet
 * (its lifetime starts now) or it was cleared earlier in this request.
 */
export function liveSession(req: Request): SessionData {
  assertCookieWritable(req);
  let session = req.session;
  if (!session) {
    req.session = {};
    session = req.session as SessionData;
  }
  if (session.expiresAt === undefined) session.expiresAt = expiresAt(req);
  return session;
}

/** Starts an authenticated session: a new session object, so nothing from before survives. */
export function logIn(req: Request, userId: number): void {
  assertCookieWritable(req);
  req.session = { userId, expiresAt: expiresAt(req) };
}

/** Ends the session; the cookie is cleared on this answer. */
export function logOut(req: Request): void {
  assertCookieWritable(req);
  req.session = null;
}

function maxAgeSeconds(req: Request): number {
  return (req.sessionOptions.maxAge ?? 0) / 1000;
}

function expiresAt(req: Request): number {
  return Math.ceil(Date.now() / 1000 + maxAgeSeconds(req));
}

function assertCookieWritable(req: Request): void {
  if (req.sessionOptions.secure && !req.secure) {
    throw new Error(
      'DEMO_SECURE_COOKIES is set but this request did not arrive over HTTPS, so the session cookie cannot be written (behind a TLS-terminating proxy, set DEMO_TRUST_PROXY)',
    );
  }
}
