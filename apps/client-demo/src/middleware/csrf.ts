/**
 * CSRF protection for form posts with `csrf-sync` (the synchronizer-token pattern): a random token
 * is kept in the session (`req.session.csrfToken`, see `session.ts`) and written into every form's
 * hidden `_csrf` field; a post must send it back. A post without a session, without the field or
 * with another session's token gets 403 and the "Form expired" page, and never reaches the
 * controller.
 *
 * The library's `csrfSynchronisedProtection` (and `isRequestValid`, which it calls) compares the
 * two tokens with `===`, which is not constant-time: it returns at the first differing character.
 * `verifyCsrf` below therefore takes the two tokens through the library's accessors and compares
 * them itself with `crypto.timingSafeEqual`. The library still generates (`randomBytes`), stores
 * and reads the tokens.
 */
import { csrfSync } from 'csrf-sync';
import type { NextFunction, Request, Response } from 'express';
import { safeEqual } from '../security/tokens.js';
import { renderPage } from '../views/engine.js';
import { liveSession } from './session.js';

const { generateToken, getTokenFromRequest, getTokenFromState } = csrfSync({
  size: 32, // bytes of entropy (64 hex characters); the library's default, 128, only adds bulk
  getTokenFromRequest: (req) => {
    const submitted = (req.body as Record<string, unknown> | undefined)?._csrf;
    return typeof submitted === 'string' ? submitted : undefined;
  },
  getTokenFromState: (req) => req.session?.csrfToken,
  storeTokenInState: (req, token) => {
    // Storing is what starts a session (and its cookie): only pages with a form get one.
    const session = liveSession(req);
    if (typeof token === 'string') session.csrfToken = token;
    else delete session.csrfToken;
  },
});

declare global {
  namespace Express {
    interface Locals {
      /** The session's CSRF token for a form (page routes only; see `provideCsrfToken`). */
      csrfToken?: () => string;
    }
  }
}

/**
 * Offers the page's templates the session's CSRF token, created on first use: only a page that
 * renders a form starts a session (and gets a cookie).
 */
export function provideCsrfToken(req: Request, res: Response, next: NextFunction): void {
  res.locals.csrfToken = () => generateToken(req);
  next();
}

/** A new token for the session (at log-in: a token seen before it is worthless after it). */
export function rotateCsrfToken(req: Request): void {
  generateToken(req, true);
}

/** Lets a form post through only with its session's token; otherwise 403 "Form expired". */
export function verifyCsrf(req: Request, res: Response, next: NextFunction): void {
  const submitted = getTokenFromRequest(req);
  const expected = getTokenFromState(req);
  if (
    typeof submitted === 'string' &&
    typeof expected === 'string' &&
    expected.length > 0 &&
    safeEqual(submitted, expected)
  ) {
    next();
    return;
  }
  res.status(403);
  renderPage(req, res, 'errors/csrf', { title: 'Form expired' });
}
