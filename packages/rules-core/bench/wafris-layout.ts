/**
 * The anchor's range-table layout, shared by the SQLite and the Redis reproductions so that both
 * store byte-identical members and decide matches the same way.
 *
 * Each range becomes two text members, `<lexdec start>-start-<id>` and `<lexdec end>-end-<id>`.
 * A lookup takes the lexical-decimal address (39 digits, no suffix) and reads the nearest member
 * at-or-above it and the nearest member at-or-below it; the address is in a range when both
 * members end with the same id (the Lua client's `ip_in_cidr_range`, the Ruby client's two SQL
 * queries). Because every member is longer than the bare address it is compared with, a member
 * whose number equals the address always sorts above it, which is where the anchor's false
 * negatives come from (WAF-SPEC defects 1 and 2):
 * - the first address of a range finds the previous range's end below it, so it never matches,
 *   and a single-address range (start = end) never matches at all;
 * - with nested ranges, an address of the outer range after the inner one finds the inner
 *   range's end below it and the outer range's end above it: no match.
 */
import type { IpRange } from '@rampart/rules-core/ip/range';
import { lexicalDecimal } from './lexical-decimal.ts';

/** The two members of range number `id`. */
export function rangeMembers(range: IpRange, id: number): [start: string, end: string] {
  return [`${lexicalDecimal(range.start)}-start-${id}`, `${lexicalDecimal(range.end)}-end-${id}`];
}

/**
 * Every member of a table, sorted in text order (the order an index keeps them in), with range
 * `i` of `ranges` carrying id `i`. Sorting up front lets SQLite build its index in one pass and
 * lets Redis append to its skiplist instead of inserting at random places.
 */
export function tableMembers(ranges: readonly IpRange[]): string[] {
  const members: string[] = new Array(ranges.length * 2);
  ranges.forEach((range, id) => {
    const [start, end] = rangeMembers(range, id);
    members[2 * id] = start;
    members[2 * id + 1] = end;
  });
  return members.sort(compareText);
}

/** Plain code-unit order: what SQLite's BINARY collation and Redis' memcmp give for ASCII. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The id after the last `-` of a member (the Lua `match('([^%-]+)$')`). */
export function memberId(member: string): string {
  return member.slice(member.lastIndexOf('-') + 1);
}

/**
 * The anchor's verdict for one table: the matched range id, or -1 when either neighbour is
 * missing or the two neighbours belong to different ranges.
 */
export function matchNeighbours(above: string | undefined, below: string | undefined): number {
  if (above === undefined || below === undefined) return -1;
  const id = memberId(above);
  return id === memberId(below) ? Number(id) : -1;
}
