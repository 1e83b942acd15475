/**
 * The `wait` of a blocking poll (`GET /v1/snapshot?wait=30s`), as Consul's blocking queries
 * spell it: a whole number with a unit, `ms`, `s` or `m` (a bare number is seconds), at most the
 * hub's `HUB_MAX_POLL_WAIT_MS`. `waitPattern` says the same as one regex, for the OpenAPI
 * document (`describeWait`), and `wait-pattern.test.ts` holds the two to each other.
 */
import { BadRequestException } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

const WAIT = /^(\d+)(ms|s|m)?$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

/** Milliseconds to hold, undefined without `wait`; a 400 naming the field otherwise. */
export function parseWait(raw: unknown, maxMs: number): number | undefined {
  if (raw === undefined) return undefined;
  const match = typeof raw === 'string' ? WAIT.exec(raw) : null;
  if (!match) {
    throw new BadRequestException(
      'wait must be a duration such as 30s, 500ms or 1m (whole numbers; a bare number is seconds)',
    );
  }
  const ms = Number(match[1]) * UNIT_MS[(match[2] ?? 's') as keyof typeof UNIT_MS];
  if (ms > maxMs) throw new BadRequestException(`wait must be at most ${maxMs / 1000}s`);
  return ms;
}

/** Exactly the waits `parseWait` accepts with `maxMs`, as a regex (JSON Schema `pattern`). */
export function waitPattern(maxMs: number): string {
  const ms = atMost(maxMs);
  const s = atMost(Math.floor(maxMs / UNIT_MS.s));
  const m = atMost(Math.floor(maxMs / UNIT_MS.m));
  return `^0*(?:${ms}ms|${s}s?|${m}m)$`;
}

/** Gives every `wait` query parameter of the document the pattern for `maxMs`. */
export function describeWait(document: OpenAPIObject, maxMs: number): void {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations) as { parameters?: unknown[] }[]) {
      for (const parameter of operation.parameters ?? []) {
        const p = parameter as { name?: string; in?: string; schema?: object };
        if (p.name !== 'wait' || p.in !== 'query') continue;
        p.schema = { type: 'string', pattern: waitPattern(maxMs) };
      }
    }
  }
}

/** A regex group matching the decimal numbers 0..n without leading zeros. */
export function atMost(n: number): string {
  const digits = String(Math.floor(n));
  const options = ['0'];
  // Every number with fewer digits.
  if (digits.length > 1) options.push(`[1-9]\\d{0,${digits.length - 2}}`);
  // Numbers with as many digits: the first i digits of n, then a smaller one, then any.
  for (let i = 0; i < digits.length; i++) {
    const d = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (d - 1 < low) continue;
    const rest = digits.length - i - 1;
    options.push(`${digits.slice(0, i)}[${low}-${d - 1}]${rest > 0 ? `\\d{${rest}}` : ''}`);
  }
  if (digits !== '0') options.push(digits);
  return `(?:${options.join('|')})`;
}
