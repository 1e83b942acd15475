/**
 * Exponential backoff with full jitter (a random wait between 0 and the exponential cap), as
 * recommended by the AWS architecture note: retries of many processes that failed together
 * spread out instead of arriving in waves.
 */
export interface BackoffOptions {
  /** The cap of the first retry's wait. */
  readonly baseMs: number;
  /** The largest cap. */
  readonly maxMs: number;
  /** Source of randomness in [0, 1) (tests pin it). */
  readonly random?: () => number;
}

/** The wait before retry number `attempt` (1 for the first retry). */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round((options.random ?? Math.random)() * cap);
}

/** `meanMs` jittered uniformly by ±`spread` (0.2 = ±20%), so processes started together drift apart. */
export function jittered(meanMs: number, spread = 0.2, random: () => number = Math.random): number {
  return Math.round(meanMs * (1 - spread + 2 * spread * random()));
}

/**
 * The wait a `Retry-After` header asks for, in milliseconds: delta-seconds or an HTTP date;
 * undefined when absent or unparseable. Capped at `maxMs` so a hostile or buggy answer cannot
 * park the sender forever.
 */
export function retryAfterMs(
  header: string | null,
  maxMs: number,
  now = Date.now(),
): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const text = header.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(maxMs, Math.max(0, ms));
}
