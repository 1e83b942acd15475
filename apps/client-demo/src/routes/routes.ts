/**
 * Every route of the demo, in one table (like Rails' `config/routes.rb`).
 *
 * Machine routes (`/robots.txt`, `/healthz`, any extra ones the app was given) come first and carry no
 * session; page routes get the session, the current user and the security headers; form posts
 * are parsed (urlencoded, 16 KiB at most) and CSRF-checked before their controller runs.
 */
import express, { type Router } from 'express';
import {
  AccountController,
  loadCurrentUser,
  requireUser,
} from '../controllers/account-controller.js';
import { HealthController } from '../controllers/health-controller.js';
import { HomeController } from '../controllers/home-controller.js';
import { ProductsController } from '../controllers/products-controller.js';
import { type LoginSignals, SessionsController } from '../controllers/sessions-controller.js';
import type { Database } from '../db/database.js';
import { provideCsrfToken, verifyCsrf } from '../middleware/csrf.js';
import { securityHeaders } from '../middleware/security-headers.js';
import { type SessionOptions, sessionMiddleware } from '../middleware/session.js';
import { ProductModel } from '../models/product.js';
import { UserModel } from '../models/user.js';

export interface RouteDependencies {
  readonly database: Database;
  readonly session: SessionOptions;
  /** A hash to verify against for unknown e-mails (see `SessionsController`). */
  readonly decoyHash: Promise<string>;
  /** Where login outcomes go (the WAF's signals); none without a WAF. */
  readonly loginSignals?: LoginSignals;
  /** Extra machine routes (no session), mounted before the page routes. */
  readonly extra?: Router;
}

const ROBOTS = 'User-agent: *\nDisallow: /account\nDisallow: /login\n';

export function routes(deps: RouteDependencies): Router {
  const users = new UserModel(deps.database.db);
  const products = new ProductModel(deps.database.db);
  const home = new HomeController(products);
  const catalogue = new ProductsController(products);
  const sessions = new SessionsController(users, deps.decoyHash, deps.loginSignals);
  const account = new AccountController(users);
  const health = new HealthController(deps.database);
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  const router = express.Router();
  // The cheapest route (what `npm run bench:middleware` loads): a constant, no session, no DB.
  router.get('/robots.txt', (_req, res) => {
    res.type('text/plain').send(ROBOTS);
  });
  router.get('/healthz', health.show);
  if (deps.extra) router.use(deps.extra);

  const pages = express.Router();
  pages.use(
    securityHeaders({ https: deps.session.secure }),
    sessionMiddleware(deps.session),
    provideCsrfToken,
    loadCurrentUser(users),
  );
  pages.get('/', home.index);
  pages.get('/products', catalogue.index);
  pages.get('/products/:slug', catalogue.show);
  pages.get('/login', sessions.new);
  pages.post('/login', form, verifyCsrf, sessions.create);
  pages.post('/logout', form, verifyCsrf, sessions.destroy);
  pages.get('/account', requireUser, account.show);
  router.use(pages);
  return router;
}
