/**
 * Capture groups whose place in a match is fixed by the match's two ends, found without reading
 * the match: in `article-(\d+)` group 1 always starts 8 bytes after the match's start and ends
 * at its end; in `src="/img/(\d+)\.png"` it starts 10 bytes in and ends 5 bytes before the end.
 *
 * Every `bytes` node of the AST consumes exactly one byte, so a subpattern without repetition
 * and with alternatives of one length has a fixed width. A group reached from the pattern's root
 * through concatenations and groups only (no alternative, no repetition other than `{1}`) takes
 * part in every match, once; if what precedes it within the match has a fixed width, its start
 * is at that offset from the match's start whichever way the pattern matched, and likewise its
 * end from the match's end. So for a span the DFA has confirmed as the rule's match, those slots
 * are arithmetic, and agree with what the Pike VM reports (property-tested against it).
 *
 * Only rules where every group's both ends are fixed this way get a {@link FixedSpans}; the
 * others use the one-pass tables, the bounded backtracker or the Pike VM.
 */
import type { Node } from '../syntax/ast.js';

/** Width in bytes of every match of `node`, or -1 when matches of several widths exist. */
export function fixedWidth(node: Node): number {
  switch (node.type) {
    case 'empty':
    case 'look':
      return 0;
    case 'bytes':
      return 1;
    case 'group':
      return fixedWidth(node.body);
    case 'concat': {
      let sum = 0;
      for (const item of node.items) {
        const w = fixedWidth(item);
        if (w < 0) return -1;
        sum += w;
      }
      return sum;
    }
    case 'alt': {
      const first = node.items.length > 0 ? fixedWidth(node.items[0] as Node) : 0;
      for (const item of node.items) if (fixedWidth(item) !== first) return -1;
      return first;
    }
    case 'repeat': {
      if (node.min !== node.max) return -1;
      const w = fixedWidth(node.body);
      return w < 0 ? -1 : w * node.min;
    }
  }
}

/** A group's ends as offsets: from the match's start, from its end (-1: not fixed that way). */
interface Placement {
  readonly fromStart: number;
  readonly fromEnd: number;
  readonly width: number;
}

export class FixedSpans {
  private readonly slots: Int32Array;

  private constructor(
    /** Per group (0 = the whole match): where it starts and ends, encoded as in `analyse`. */
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
  ) {
    this.slots = new Int32Array(2 * starts.length);
  }

  /**
   * The fixed spans of a pattern's groups; undefined when some group's ends are not both fixed.
   * In `starts` and `ends`, a value >= 0 is an offset from the match's start and `-1 - n` is an
   * offset `n` back from its end.
   */
  static analyse(ast: Node, groupCount: number): FixedSpans | undefined {
    const placed = new Map<number, Placement>();
    place(ast, 0, 0, placed);
    const starts = new Int32Array(groupCount + 1);
    const ends = new Int32Array(groupCount + 1).fill(-1); // group 0: the whole match
    for (let g = 1; g <= groupCount; g++) {
      const p = placed.get(g);
      if (p === undefined) return undefined;
      if (p.fromStart >= 0) starts[g] = p.fromStart;
      else if (p.fromEnd >= 0 && p.width >= 0) starts[g] = -1 - (p.fromEnd + p.width);
      else return undefined;
      if (p.fromEnd >= 0) ends[g] = -1 - p.fromEnd;
      else if (p.fromStart >= 0 && p.width >= 0) ends[g] = p.fromStart + p.width;
      else return undefined;
    }
    return new FixedSpans(starts, ends);
  }

  /** Group `group`'s start and end, encoded as in {@link analyse}. */
  span(group: number): readonly [number, number] {
    return [this.starts[group] as number, this.ends[group] as number];
  }

  /**
   * The slots of the rule's match `[start, end)` (group i at `2i`, `2i + 1`, as the Pike VM
   * returns them). The span must be a match of the rule: nothing is checked. The array is reused
   * by the next call.
   */
  captures(start: number, end: number): Int32Array {
    const slots = this.slots;
    const { starts, ends } = this;
    for (let g = 0; g < starts.length; g++) {
      const s = starts[g] as number;
      const e = ends[g] as number;
      slots[2 * g] = s >= 0 ? start + s : end + 1 + s;
      slots[2 * g + 1] = e >= 0 ? start + e : end + 1 + e;
    }
    return slots;
  }
}

/**
 * Records, for every group that takes part in every match of `node` exactly once, how far its
 * ends are from the ends of the match (`fromStart`/`fromEnd` of `node` itself; -1 unknown).
 */
function place(node: Node, fromStart: number, fromEnd: number, out: Map<number, Placement>): void {
  switch (node.type) {
    case 'group':
      out.set(node.index, { fromStart, fromEnd, width: fixedWidth(node.body) });
      place(node.body, fromStart, fromEnd, out);
      return;
    case 'concat': {
      const widths = node.items.map(fixedWidth);
      let before = fromStart;
      for (let k = 0; k < node.items.length; k++) {
        let after = fromEnd;
        for (let j = k + 1; j < widths.length && after >= 0; j++) {
          const w = widths[j] as number;
          after = w < 0 ? -1 : after + w;
        }
        place(node.items[k] as Node, before, after, out);
        const w = widths[k] as number;
        before = before < 0 || w < 0 ? -1 : before + w;
      }
      return;
    }
    case 'repeat':
      // `{1}` is the body itself; any other count may skip or repeat the groups inside.
      if (node.min === 1 && node.max === 1) place(node.body, fromStart, fromEnd, out);
      return;
    default:
      // Alternatives may leave a group out; the rest hold no groups.
      return;
  }
}
