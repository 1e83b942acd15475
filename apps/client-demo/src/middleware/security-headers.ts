/**
 * Conservative security headers for the HTML pages (what helmet would set for a site with no
 * inline scripts and no third-party assets).
 */
import type { NextFunction, Request, Response } from 'express';

const HEADERS: readonly [string, string][] = [
  [
    'Content-Security-Policy',
    "default-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  ],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'same-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
];

export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  for (const [name, value] of HEADERS) res.setHeader(name, value);
  next();
}
