/**
 * The per-asset rule bitmap of the Prexy article: for a cacheable asset, remember which rules
 * ever matched its body, so the next response of the same asset runs only those rules, and an
 * asset no rule matched streams straight through without being scanned.
 *
 * Why running only the matched rules gives the same bytes: at every step the engine picks one
 * winning match among all rules' candidates (earliest start, then rule order or length). A rule
 * that never won is never the pick, so removing it changes no pick, and the output is identical.
 * Runs that hit the buffer limit (SUBSTITUTION-SPEC 13) are not remembered: there the outcome
 * depends on every rule's partial matches.
 *
 * An asset is identified by host, path and query plus its validator: a strong `ETag`, else
 * `Last-Modified`. Responses with neither, with a weak `ETag`, or marked `no-store` are not
 * remembered. An entry also names the rule set it was measured with: a changed rule set (a new
 * id) makes it a miss. Memory is bounded by a byte budget, least recently used out first.
 */
import type { IncomingHttpHeaders } from 'node:http';

interface Entry {
  readonly ruleSetId: string;
  readonly matched: readonly number[];
  readonly bytes: number;
}

/** Bookkeeping bytes per entry on top of its key (a Map slot, the entry and its array). */
const ENTRY_OVERHEAD = 120;

export class MatchBitmapCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly budgetBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The rules that matched `key`'s body under `ruleSetId`, or undefined when unknown. */
  lookup(key: string, ruleSetId: string): readonly number[] | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.ruleSetId !== ruleSetId) {
      this.misses++;
      return undefined;
    }
    this.entries.delete(key); // most recently used goes last
    this.entries.set(key, entry);
    this.hits++;
    return entry.matched;
  }

  remember(key: string, ruleSetId: string, matched: readonly number[]): void {
    const bytes = ENTRY_OVERHEAD + 2 * (key.length + ruleSetId.length) + 8 * matched.length;
    if (bytes > this.budgetBytes) return;
    this.forget(key);
    this.entries.set(key, { ruleSetId, matched: [...matched], bytes });
    this.used += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.used -= entry.bytes;
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.bytes;
  }
}

/**
 * The cache key of an asset, or undefined when the response is not one to remember. A field
 * sent on several lines arrives as an array (undici's headers): `Cache-Control` lines are one
 * list, and an asset with two `ETag` or `Last-Modified` lines has no single validator.
 */
export function assetKey(
  host: string,
  target: string,
  headers: IncomingHttpHeaders,
): string | undefined {
  const field = (name: string): string | string[] | undefined => headers[name];
  const control = field('cache-control');
  const cacheControl = (
    Array.isArray(control) ? control.join(', ') : (control ?? '')
  ).toLowerCase();
  if (/(?:^|,)\s*no-store\b/.test(cacheControl)) return undefined;
  const etag = field('etag');
  const lastModified = field('last-modified');
  let validator: string | undefined;
  if (etag !== undefined) {
    if (Array.isArray(etag) || etag.startsWith('W/')) return undefined;
    validator = `e${etag}`;
  } else if (lastModified !== undefined) {
    if (Array.isArray(lastModified)) return undefined;
    validator = `m${lastModified}`;
  }
  return validator === undefined ? undefined : `${host}\u0000${target}\u0000${validator}`;
}
