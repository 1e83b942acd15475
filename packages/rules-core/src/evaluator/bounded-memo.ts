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
 */
export class BoundedMemo<V> {
  private newer = new Map<string, V>();
  private older = new Map<string, V>();
  private readonly generation: number;

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
    const value = this.newer.get(key);
    if (value !== undefined) return value;
    const old = this.older.get(key);
    if (old !== undefined) {
      this.older.delete(key);
      this.set(key, old);
    }
    return old;
  }

  set(key: string, value: V): void {
    if (this.newer.size >= this.generation) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(key, value);
  }
}
