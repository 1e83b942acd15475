import type { NextFunction, Request, Response } from 'express';
import { logOut, sessionUserId } from '../middleware/session.js';
import type { UserModel } from '../models/user.js';
import { renderPage } from '../views/engine.js';

/** Loads the signed-in user (if any) into `res.locals.currentUser` for every page. */
export function loadCurrentUser(users: UserModel) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const id = sessionUserId(req);
    if (id) {
      const user = await users.findById(id);
      if (user) res.locals.currentUser = { id: user.id, name: user.name, email: user.email };
      else logOut(req); // the account is gone
    }
    next();
  };
}

/** Pages behind a session: anonymous visitors are sent to the login form, and back after it. */
export function requireUser(req: Request, res: Response, next: NextFunction): void {
  if (res.locals.currentUser) {
    next();
    return;
  }
  res.redirect(302, `/login?next=${encodeURIComponent(req.originalUrl)}`);
}

export class AccountController {
  constructor(private readonly users: UserModel) {}

  show = async (req: Request, res: Response): Promise<void> => {
    const user = await this.users.findById((res.locals.currentUser as { id: number }).id);
    renderPage(req, res, 'account/show', {
      title: 'Your account',
      memberSince: (user?.created_at ?? '').slice(0, 10),
    });
  };
}
