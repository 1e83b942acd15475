/**
 * CSRF protection for form posts: the token in the form's `_csrf` field must equal the one bound
 * to the session (see `session.ts`). A post without a session, without the field or with another
 * token gets 403 and a page asking to reload, and never reaches the controller.
 */
import type { NextFunction, Request, Response } from 'express';
import { renderPage } from '../views/engine.js';

export function verifyCsrf(req: Request, res: Response, next: NextFunction): void {
  const submitted = (req.body as Record<string, unknown> | undefined)?._csrf;
  if (req.session?.verifyCsrf(submitted)) {
    next();
    return;
  }
  res.status(403);
  renderPage(req, res, 'errors/csrf', { title: 'Form expired' });
}
