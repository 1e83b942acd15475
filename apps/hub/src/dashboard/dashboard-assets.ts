/**
 * Where the dashboard's built files are (`@rampart/dashboard`'s `dist/`, built by Vite before the
 * hub) and the headers they are served with. Pure but for locating the folder.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The URL path the dashboard lives under (Vite's `base`). */
export const DASHBOARD_PATH = '/ui';

/** Where browsers report violations of the policy (`csp-reports.ts`); JSON, 16 KiB at most. */
export const CSP_REPORT_PATH = `${DASHBOARD_PATH}/csp-reports`;
export const CSP_REPORT_TYPE = 'application/csp-report';
export const CSP_REPORT_MAX_BYTES = 16 * 1024;

/**
 * Scripts, styles, images and connections from the hub's own origin only: no inline script or
 * style, no `eval`, no plugin, no framing, no `<base>`, forms only to the hub. What a report
 * carries (paths, user agents) is rendered as text, and even markup that slipped through could
 * run nothing. Violations are reported to {@link CSP_REPORT_PATH}.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  `report-uri ${CSP_REPORT_PATH}`,
].join('; ');

/** Headers of every dashboard response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Hashed asset names never change content: cached for a year. `index.html`: always revalidated. */
export const ASSET_MAX_AGE_MS = 365 * 86_400_000;
export const PAGE_CACHE = 'no-cache';

/** The dashboard's `dist/` folder, or undefined when the package is not installed or built. */
export function dashboardDist(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const dist = join(dirname(require.resolve('@rampart/dashboard/package.json')), 'dist');
    return existsSync(join(dist, 'index.html')) ? dist : undefined;
  } catch {
    return undefined;
  }
}
