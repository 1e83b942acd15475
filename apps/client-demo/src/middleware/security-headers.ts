/**
 * Security headers for the HTML pages, with helmet: its defaults, made stricter where this site
 * allows it (no inline scripts or styles, no third-party assets, never framed).
 *
 * The Content-Security-Policy is spelled out in full (`useDefaults: false`) rather than merged
 * with helmet's default policy, whose `style-src` allows `https:` and `'unsafe-inline'`,
 * `font-src` allows `https:` and `data:`, `frame-ancestors` and `base-uri` allow `'self'`: all
 * weaker than this site needs. From helmet's defaults it keeps `object-src 'none'` and
 * `script-src-attr 'none'`, and `upgrade-insecure-requests` only when the site is served over
 * HTTPS (`DEMO_SECURE_COOKIES`): on the plain-HTTP demo (`npm run dev`) that directive makes
 * browsers that apply it to loopback addresses ask for the stylesheet and post the forms over
 * `https://`, which nothing answers.
 *
 * Changed from helmet's defaults: `X-Frame-Options: DENY` (default `SAMEORIGIN`) and
 * `Referrer-Policy: same-origin` (default `no-referrer`; same-origin keeps the referrer on the
 * site's own links and sends none elsewhere). Kept as helmet sets them: COOP and CORP
 * `same-origin`, `Strict-Transport-Security` (ignored by browsers over plain HTTP),
 * `X-Content-Type-Options: nosniff`, `Origin-Agent-Cluster`, `X-DNS-Prefetch-Control: off`,
 * `X-Download-Options`, `X-Permitted-Cross-Domain-Policies: none`, `X-XSS-Protection: 0`.
 */
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export interface SecurityHeadersOptions {
  /** The site is served over HTTPS (`DEMO_SECURE_COOKIES`). */
  readonly https: boolean;
}

export function securityHeaders(options: SecurityHeadersOptions): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        scriptSrcAttr: ["'none'"],
        ...(options.https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
  });
}
