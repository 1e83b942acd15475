/**
 * A bounded memo from strings to results, for the evaluator's per-request work that depends on
 * one request value only: the range categories of a client address, and which pattern guards a
 * field's value meets.
 *
 * Both are cheap when their tables are in the CPU cache, but on a busy server the app's own work
 * evicts them between two requests, and then they cost dozens of cache misses. Real traffic
 * repeats these values (a browser loads a page and its assets with one address and one user
 * agent, many clients ask for the same paths), so remembering the result per value replaces the
 * misses with one map lookup.
 *
 * Two generations of at most `capacity / 2` entries: lookups read both, inserts go to the newer,
 * and when it is full the older is dropped whole. O(1), no per-entry bookkeeping, and a value
 * found in the older generation is moved to the newer one, so values in use stay. A flood of
 * values seen once costs one insert each and can never hold more than `capacity` entries.
 * The results only depend on the snapshot, so each evaluator keeps its own memos.
 *
 * The key looked up or stored last is compared first: consecutive requests often repeat a value
 * (one host, mostly `GET`, a client's burst of requests with one user agent), and a string
 * compare costs less than a lookup in a map that other requests have pushed out of the CPU
 * cache. That key is held as the caller passed it, so besides its entries a memo keeps alive at
 * most one string that may be a slice of a longer one.
 */
export class BoundedMemo<V> {
  private newer = new Map<string, V>();
  private older = new Map<string, V>();
  private readonly generation: number;
  private lastKey: string | undefined;
  private lastValue: V | undefined;

  /** `capacity` >= 2; use no memo at all for a capacity of 0. */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 2)
      throw new RangeError('capacity must be an integer >= 2');
    this.generation = capacity >>> 1;
  }

  get size(): number {
    return this.newer.size + this.older.size;
  }

  get(key: string): V | undefined {
    if (key === this.lastKey) return this.lastValue;
    const value = this.newer.get(key);
    if (value !== undefined) {
      this.lastKey = key;
      this.lastValue = value;
      return value;
    }
    const old = this.older.get(key);
    if (old !== undefined) {
      this.older.delete(key);
      this.set(key, old);
    }
    return old;
  }

  /**
   * Remembers `value` for `key`. The key is stored as a copy of its own: a string sliced from a
   * longer one (a path cut from a 16 KB URL) would otherwise keep the whole of it alive, and the
   * memo's memory would no longer be bounded by its keys' length.
   */
  set(key: string, value: V): void {
    if (this.newer.size >= this.generation) {
      this.older = this.newer;
      this.newer = new Map();
    }
    const own = ownCopy(key);
    this.newer.set(own, value);
    this.lastKey = own;
    this.lastValue = value;
  }
}

/**
 * A copy of `text` that shares no memory with another string. V8 makes slices of 13 characters
 * or more views of their parent; a round trip through UTF-16 bytes makes a flat string of its own
 * (code unit for code unit, so any string comes back equal).
 */
export function ownCopy(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf16le').toString('utf16le');
}
