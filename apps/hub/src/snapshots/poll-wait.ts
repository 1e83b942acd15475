/**
 * The `wait` of a blocking poll (`GET /v1/snapshot?wait=30s`), as Consul's blocking queries
 * spell it: a whole number with a unit, `ms`, `s` or `m` (a bare number is seconds), at most the
 * hub's `HUB_MAX_POLL_WAIT_MS`.
 */
import { BadRequestException } from '@nestjs/common';

const WAIT = /^(\d{1,7})(ms|s|m)?$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

/** Milliseconds to hold, undefined without `wait`; a 400 naming the field otherwise. */
export function parseWait(raw: unknown, maxMs: number): number | undefined {
  if (raw === undefined) return undefined;
  const match = typeof raw === 'string' ? WAIT.exec(raw.trim()) : null;
  if (!match) {
    throw new BadRequestException(
      'wait must be a duration such as 30s, 500ms or 1m (whole numbers; a bare number is seconds)',
    );
  }
  const ms = Number(match[1]) * UNIT_MS[(match[2] ?? 's') as keyof typeof UNIT_MS];
  if (ms > maxMs) throw new BadRequestException(`wait must be at most ${maxMs / 1000}s`);
  return ms;
}
