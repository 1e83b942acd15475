/**
 * Flattening of labelled, possibly nested or overlapping ranges into disjoint intervals.
 *
 * A lookup that finds "the range just below the address" can only be correct when ranges do not
 * overlap: with 10.0.0.0/8 and 10.1.0.0/16 both stored, the anchor looked at the nearest start
 * below 10.0.0.5, found 10/8's... or 10.1/16's end, and missed (WAF-SPEC defect 2). Here every
 * address belongs to at most one output interval, and that interval carries the set of labels of
 * every input range that contained it, so a binary search never returns a false negative.
 */
import type { IpFamily } from './address.js';
import type { IpRange } from './range.js';

export interface LabelledRange {
  readonly range: IpRange;
  /** A small non-negative integer the caller maps to a meaning (rule index, country code id...). */
  readonly label: number;
}

export interface FlatRange {
  readonly family: IpFamily;
  readonly start: bigint;
  readonly end: bigint;
  /** Sorted, distinct labels; equal sets share one array instance. */
  readonly labels: readonly number[];
}

/**
 * Returns disjoint ranges sorted by family (4 first) then start; adjacent intervals with the same
 * label set are merged. Runs in O(n log n); input that is already disjoint (public geo data)
 * takes a fast path without the sweep.
 */
export function flattenRanges(entries: readonly LabelledRange[]): FlatRange[] {
  const sets = new LabelSetInterner();
  const out: FlatRange[] = [];
  for (const family of [4, 6] as const) {
    const ofFamily = entries.filter((e) => e.range.family === family);
    ofFamily.sort(
      (a, b) => compareBig(a.range.start, b.range.start) || compareBig(a.range.end, b.range.end),
    );
    const flat = isDisjoint(ofFamily) ? disjointRun(ofFamily, sets) : sweep(ofFamily, sets);
    mergeAdjacent(flat, out);
  }
  return out;
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isDisjoint(sorted: readonly LabelledRange[]): boolean {
  for (let i = 1; i < sorted.length; i++) {
    if ((sorted[i] as LabelledRange).range.start <= (sorted[i - 1] as LabelledRange).range.end)
      return false;
  }
  return true;
}

function disjointRun(sorted: readonly LabelledRange[], sets: LabelSetInterner): FlatRange[] {
  return sorted.map(({ range, label }) => ({
    family: range.family,
    start: range.start,
    end: range.end,
    labels: sets.intern([label]),
  }));
}

/** Sweep line over start/end+1 events, keeping a count per active label. */
function sweep(sorted: readonly LabelledRange[], sets: LabelSetInterner): FlatRange[] {
  const events: { at: bigint; label: number; delta: 1 | -1 }[] = [];
  for (const { range, label } of sorted) {
    events.push({ at: range.start, label, delta: 1 }, { at: range.end + 1n, label, delta: -1 });
  }
  events.sort((a, b) => compareBig(a.at, b.at));
  const active = new Map<number, number>();
  const out: FlatRange[] = [];
  let i = 0;
  while (i < events.length) {
    const at = (events[i] as (typeof events)[number]).at;
    while (i < events.length && (events[i] as (typeof events)[number]).at === at) {
      const e = events[i++] as (typeof events)[number];
      const count = (active.get(e.label) ?? 0) + e.delta;
      if (count === 0) active.delete(e.label);
      else active.set(e.label, count);
    }
    if (active.size === 0 || i === events.length) continue;
    const next = (events[i] as (typeof events)[number]).at;
    const family = (sorted[0] as LabelledRange).range.family;
    out.push({ family, start: at, end: next - 1n, labels: sets.intern([...active.keys()]) });
  }
  return out;
}

function mergeAdjacent(flat: readonly FlatRange[], out: FlatRange[]): void {
  let previous: FlatRange | undefined;
  for (const r of flat) {
    if (previous && previous.labels === r.labels && previous.end + 1n === r.start) {
      previous = { ...previous, end: r.end };
      out[out.length - 1] = previous;
    } else {
      out.push(r);
      previous = r;
    }
  }
}

/** Gives equal label sets one shared, sorted array so they compare by identity. */
class LabelSetInterner {
  private readonly byKey = new Map<string, readonly number[]>();

  intern(labels: number[]): readonly number[] {
    labels.sort((a, b) => a - b);
    const key = labels.join(',');
    let set = this.byKey.get(key);
    if (!set) {
      set = Object.freeze(labels);
      this.byKey.set(key, set);
    }
    return set;
  }
}
