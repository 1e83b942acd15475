/**
 * A bounded memo of recent client addresses, for the range stage of the evaluator.
 *
 * Finding an address's range categories is four searches of tables holding a million ranges.
 * Each search is cheap when its memory is in the CPU cache, but on a busy server the app's own
 * work evicts the tables between two requests, and the searches then cost dozens of cache
 * misses. Real traffic repeats addresses (a browser loads a page and its assets over a few
 * seconds, an API client polls), so remembering the result per address text replaces those
 * misses with one map lookup.
 *
 * Two generations of at most `capacity / 2` entries: lookups read both, inserts go to the newer,
 * and when it is full the older is dropped whole. O(1), no per-entry bookkeeping, and an address
 * found in the older generation is moved to the newer one, so addresses in use stay. A flood of
 * addresses seen once costs one insert each and can never hold more than `capacity` entries.
 * The results only depend on the snapshot, so each evaluator keeps its own memo.
 */
export class RecentAddresses<V> {
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

  get(address: string): V | undefined {
    const value = this.newer.get(address);
    if (value !== undefined) return value;
    const old = this.older.get(address);
    if (old !== undefined) {
      this.older.delete(address);
      this.set(address, old);
    }
    return old;
  }

  set(address: string, value: V): void {
    if (this.newer.size >= this.generation) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(address, value);
  }
}
