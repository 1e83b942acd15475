/**
 * Logging in and out. A failed login answers 401 with the same message whether the e-mail is
 * unknown or the password wrong, after the same amount of work (a decoy hash is verified for
 * unknown e-mails), so neither the page nor its timing tells which accounts exist.
 *
 * Every outcome is also told to the WAF (`rampart.signal`), with the e-mail tried: the hub's
 * credential-stuffing detectors count failures per address, per account and per network, and
 * the account leaves the process only as a keyed hash.
 */
import type { Request, Response } from 'express';
import { rotateCsrfToken } from '../middleware/csrf.js';
import { logIn, logOut } from '../middleware/session.js';
import type { UserModel } from '../models/user.js';
import { verifyPassword } from '../security/password.js';
import { renderPage } from '../views/engine.js';

/** Tells the WAF how a login went, and for which account (as typed). */
export type LoginSignals = (
  req: Request,
  kind: 'login_failed' | 'login_succeeded',
  account: string,
) => void;

export const LOGIN_FAILED = 'Invalid e-mail or password.';
const MAX_FIELD_LENGTH = 256;

/** Only same-site absolute paths are followed after login (no open redirect). */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//'))
    return '/account';
  if (value.includes('\\') || /[\r\n]/.test(value)) return '/account';
  return value;
}

export class SessionsController {
  constructor(
    private readonly users: UserModel,
    private readonly decoyHash: Promise<string>,
    private readonly signals: LoginSignals = () => {},
  ) {}

  new = (req: Request, res: Response): void => {
    if (res.locals.currentUser) {
      res.redirect(303, '/account');
      return;
    }
    renderPage(req, res, 'sessions/new', {
      title: 'Log in',
      error: null,
      email: '',
      next: safeNext(req.query.next),
    });
  };

  create = async (req: Request, res: Response): Promise<void> => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.slice(0, MAX_FIELD_LENGTH) : '';
    const password =
      typeof body.password === 'string' ? body.password.slice(0, MAX_FIELD_LENGTH) : '';
    const next = safeNext(body.next);
    const user = email ? await this.users.findByEmail(email) : undefined;
    const ok = await verifyPassword(password, user?.password_hash ?? (await this.decoyHash));
    if (!user || !ok || password === '') {
      this.signals(req, 'login_failed', email);
      res.status(401);
      renderPage(req, res, 'sessions/new', { title: 'Log in', error: LOGIN_FAILED, email, next });
      return;
    }
    this.signals(req, 'login_succeeded', email);
    logIn(req, user.id);
    rotateCsrfToken(req); // written with the log-in, instead of on the next page
    res.redirect(303, next);
  };

  destroy = (req: Request, res: Response): void => {
    logOut(req);
    res.redirect(303, '/');
  };
}
