import { describe, expect, it } from 'vitest';
import { CspReports, describeCspReport } from './csp-reports.js';

const report = (fields: Record<string, unknown>) => ({ 'csp-report': fields });

describe('CSP violation reports', () => {
  it('reads the directive, what was blocked and where, clipped', () => {
    expect(
      describeCspReport(
        report({
          'document-uri': 'http://127.0.0.1:4000/ui/sites/shop/traffic',
          'effective-directive': 'script-src-elem',
          'violated-directive': 'script-src',
          'blocked-uri': 'inline',
        }),
      ),
    ).toBe('script-src-elem blocked inline on http://127.0.0.1:4000/ui/sites/shop/traffic');
    expect(describeCspReport(report({ 'violated-directive': 'img-src' }))).toBe(
      'img-src blocked (inline) on ',
    );
    const long = describeCspReport(report({ 'effective-directive': 'x'.repeat(5000) }));
    expect(long?.length).toBeLessThan(250);
  });

  it('takes nothing that is not a report', () => {
    for (const body of [
      null,
      'text',
      42,
      {},
      { 'csp-report': 'x' },
      report({ 'blocked-uri': 'x' }),
    ])
      expect(describeCspReport(body)).toBeUndefined();
    const reports = new CspReports();
    expect(reports.record({})).toBe(false);
    expect(reports.received).toBe(0);
  });

  it('counts every report', () => {
    const reports = new CspReports();
    for (let i = 0; i < 5; i++) reports.record(report({ 'violated-directive': 'img-src' }), i);
    expect(reports.received).toBe(5);
  });
});
