/**
 * Content-Security-Policy violation reports from dashboards (`report-uri`): each is counted
 * (`GET /v1/metrics`, `cspViolationReports`) and logged as a warning, at most once a minute with
 * the number since, so a page that keeps violating cannot flood the log. A violation means the
 * page tried to load or run something the policy forbids: markup from a report that escaped as
 * HTML, or an extension or proxy injecting code.
 *
 * Browsers send these without credentials; the endpoint takes any well-formed report and stores
 * nothing but the count.
 */
import { Injectable, Logger } from '@nestjs/common';

const LOG_EVERY_MS = 60_000;
const CLIP = 200;

/** `directive` and `blocked` of a `application/csp-report` body, or undefined if it is none. */
export function describeCspReport(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const report = (body as Record<string, unknown>)['csp-report'];
  if (typeof report !== 'object' || report === null) return undefined;
  const field = (name: string) => {
    const value = (report as Record<string, unknown>)[name];
    return typeof value === 'string' ? value.slice(0, CLIP) : '';
  };
  const directive = field('effective-directive') || field('violated-directive');
  if (!directive) return undefined;
  return `${directive} blocked ${field('blocked-uri') || '(inline)'} on ${field('document-uri')}`;
}

@Injectable()
export class CspReports {
  private readonly logger = new Logger('Dashboard');
  /** Reports received since start. */
  received = 0;
  private loggedAt = -Infinity;
  private sinceLogged = 0;

  /** Counts and (throttled) logs one report; false when `body` is not a CSP report. */
  record(body: unknown, now = Date.now()): boolean {
    const description = describeCspReport(body);
    if (description === undefined) return false;
    this.received++;
    this.sinceLogged++;
    if (now - this.loggedAt >= LOG_EVERY_MS) {
      this.logger.warn(
        `Content-Security-Policy violation: ${description}${this.sinceLogged > 1 ? ` (${this.sinceLogged} reports since the last one logged)` : ''}`,
      );
      this.loggedAt = now;
      this.sinceLogged = 0;
    }
    return true;
  }
}
