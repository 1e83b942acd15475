/**
 * Server-side rendering with Eta: templates in this folder (`*.eta`), compiled once and cached,
 * HTML-escaped by default (`<%= %>`; `<%~ %>` writes raw output and is used only for the layout
 * body). Templates are read from `src/views` in development and production alike: the folder is
 * shipped with the package, next to `dist/`.
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { Request, Response } from 'express';

/** `src/views/`, from this module in `src/views` or in `dist/views`. */
export const VIEWS_DIR = fileURLToPath(new URL('../../src/views/', import.meta.url));

const eta = new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true });

export interface CurrentUser {
  readonly id: number;
  readonly name: string;
  readonly email: string;
}

declare global {
  namespace Express {
    interface Locals {
      currentUser?: CurrentUser;
    }
  }
}

/**
 * Renders `view` inside the layout and sends it as HTML. Every page gets `currentUser` and, for
 * the forms it may contain (log-in, log-out), `csrf()`: the session's CSRF token.
 */
export function renderPage(
  req: Request,
  res: Response,
  view: string,
  data: Record<string, unknown> & { title: string },
): void {
  const html = eta.render(view, {
    ...data,
    currentUser: res.locals.currentUser ?? null,
    // Called by the templates that hold a form: the session (and its cookie) is created only
    // for pages that need a CSRF token, not for every anonymous page view.
    csrf: () => res.locals.csrfToken?.() ?? '',
    path: req.path,
  });
  res.type('html').send(html);
}
