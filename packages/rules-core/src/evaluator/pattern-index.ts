/**
 * Rules given as lists of conditions (the evaluator's pattern rules, and the conditions of its
 * rate limits), grouped by field so that a request is compared with them in one pass per field
 * rather than rule by rule.
 *
 * Each rule gets one **guard**: one of its conditions, chosen to be cheap and selective (an
 * `exact` comparison if it has one, else `prefix`, `contains`, then `regex`). Guards are grouped
 * by the field they read (and its normalisation), so a request reads each field once:
 *
 * - `exact` guards of a field are one map lookup of the field's value;
 * - other guards of a field are tested in turn against the value read once.
 *
 * A rule can only match when its guard holds, so the rules whose guard holds are the only ones
 * whose other conditions are then tested, in rule-set order: the outcome is exactly that of
 * testing every rule in order (the property tests compare the two). For benign traffic no guard
 * holds, and a request touches the compact group tables and the literals of the fields it has,
 * not every rule and condition object: on a busy server, where those are cold in the CPU cache
 * by the next request, that is most of the stage's cost.
 *
 * Which guards hold depends on one raw request value per field (the path, the query string, the
 * user agent, the host, the method, one header), so the groups are also gathered by the field
 * they read, and each field has a {@link BoundedMemo} from its raw value to the guards it meets:
 * a user agent or a path seen recently costs one map lookup instead of its normalisation and its
 * comparisons, and a value equal to the previous request's costs one string compare. Values
 * longer than {@link MEMO_MAX_VALUE} characters are not remembered, so a memo holds at most
 * `memo` short strings per field.
 */
import { BoundedMemo } from './bounded-memo.js';
import {
  type Condition,
  Field,
  fieldValue,
  Match,
  meetsAll,
  paramValues,
  test,
} from './pattern-matcher.js';
import type { RequestInfo, RequestView } from './request.js';

/** Raw values per field remembered by default (two generations; see {@link BoundedMemo}). */
export const DEFAULT_FIELD_MEMO = 1024;
/** Longer raw values are evaluated every time rather than remembered. */
export const MEMO_MAX_VALUE = 512;

const NO_RULES: readonly number[] = Object.freeze([]);

/** Guards that compare one field exactly: the rules to look at, by value. */
interface ExactGroup {
  /** A guard of the group, for the field, name and normalisation they share. */
  readonly probe: Condition;
  readonly rulesByValue: Map<string, number[]>;
}

/** Other guards that read the same field the same way. */
interface ScanGroup {
  readonly probe: Condition;
  readonly guards: Condition[];
  /** The rule of each guard. */
  readonly rules: number[];
}

/** The groups that read one raw request field, and what its recent values met. */
interface Source {
  /** The raw field: {@link Field.QueryParam} guards read the query string, so they are `Query`. */
  readonly field: Field;
  /** The header name, for {@link Field.Header}. */
  readonly name: string;
  readonly exact: ExactGroup[];
  readonly scans: ScanGroup[];
  /** Raw value -> indices of the rules whose guard it meets (null: no memo). */
  readonly memo: BoundedMemo<readonly number[]> | null;
}

/** Preference of a match kind as a guard: lower is better. */
const GUARD_RANK: Record<Match, number> = {
  [Match.Exact]: 0,
  [Match.Prefix]: 1,
  [Match.Contains]: 2,
  [Match.Regex]: 3,
};

/** The condition of `conditions` that guards its rule. */
function guardOf(conditions: readonly Condition[]): Condition {
  let best = conditions[0] as Condition;
  for (const c of conditions) if (GUARD_RANK[c.match] < GUARD_RANK[best.match]) best = c;
  return best;
}

/** Guards that read their field the same way share this key (contains reads it lower-cased). */
function readKey(c: Condition): string {
  return `${c.field}\u0000${c.name}\u0000${c.match === Match.Contains ? 'lower' : 'raw'}`;
}

export interface PatternIndexOptions {
  /** Raw values remembered per field (default {@link DEFAULT_FIELD_MEMO}; 0 or 1: no memo). */
  readonly memo?: number;
}

export class PatternIndex {
  private readonly sources: readonly Source[];
  /** Indices of the rules whose guard held for the current request (per-call state). */
  private readonly hits: number[] = [];

  /**
   * `rules[i].conditions` are rule i's conditions (an AND, at least one each). The index refers
   * to rules by their position in `rules`.
   */
  constructor(
    private readonly rules: readonly { readonly conditions: readonly Condition[] }[],
    options: PatternIndexOptions = {},
  ) {
    const exact = new Map<string, ExactGroup>();
    const scans = new Map<string, ScanGroup>();
    rules.forEach((rule, index) => {
      if (rule.conditions.length === 0) throw new Error('a pattern rule needs a condition');
      const guard = guardOf(rule.conditions);
      const key = readKey(guard);
      if (guard.match === Match.Exact) {
        let group = exact.get(key);
        if (group === undefined) {
          group = { probe: guard, rulesByValue: new Map() };
          exact.set(key, group);
        }
        const list = group.rulesByValue.get(guard.value);
        if (list) list.push(index);
        else group.rulesByValue.set(guard.value, [index]);
      } else {
        let group = scans.get(key);
        if (group === undefined) {
          group = { probe: guard, guards: [], rules: [] };
          scans.set(key, group);
        }
        group.guards.push(guard);
        group.rules.push(index);
      }
    });
    const capacity = options.memo ?? DEFAULT_FIELD_MEMO;
    const sources = new Map<string, Source>();
    const sourceOf = (probe: Condition): Source => {
      const field = probe.field === Field.QueryParam ? Field.Query : probe.field;
      const name = field === Field.Header ? probe.name : '';
      const key = `${field}\u0000${name}`;
      let source = sources.get(key);
      if (source === undefined) {
        const memo = capacity < 2 ? null : new BoundedMemo<readonly number[]>(capacity);
        source = { field, name, exact: [], scans: [], memo };
        sources.set(key, source);
      }
      return source;
    };
    for (const group of exact.values()) sourceOf(group.probe).exact.push(group);
    for (const group of scans.values()) sourceOf(group.probe).scans.push(group);
    this.sources = [...sources.values()];
  }

  /**
   * The indices of the rules whose every condition `request` meets, in rule order. The array is
   * reused by the next call (evaluation is synchronous): read it before evaluating again.
   */
  matching(request: RequestView): readonly number[] {
    const hits = this.hits;
    hits.length = 0;
    for (let k = 0; k < this.sources.length; k++) {
      const source = this.sources[k] as Source;
      const memo = source.memo;
      const raw = rawValue(source, request.request);
      // Only a header can be absent, and no condition holds on an absent header.
      if (raw === undefined) continue;
      if (memo === null || raw.length > MEMO_MAX_VALUE) {
        this.testSource(source, request);
        continue;
      }
      let found = memo.get(raw);
      if (found === undefined) {
        const before = hits.length;
        this.testSource(source, request);
        found = hits.length === before ? NO_RULES : hits.slice(before);
        hits.length = before;
        memo.set(raw, found);
      }
      for (let i = 0; i < found.length; i++) hits.push(found[i] as number);
    }
    if (hits.length === 0) return hits;
    if (hits.length > 1) sortUnique(hits);
    let kept = 0;
    for (let i = 0; i < hits.length; i++) {
      const index = hits[i] as number;
      const rule = this.rules[index] as { readonly conditions: readonly Condition[] };
      if (rule.conditions.length === 1 || meetsAll(rule.conditions, request)) hits[kept++] = index;
    }
    hits.length = kept;
    return hits;
  }

  /** Adds the rules whose guard on `source`'s field holds to `hits`. */
  private testSource(source: Source, request: RequestView): void {
    for (let g = 0; g < source.exact.length; g++)
      this.lookUp(source.exact[g] as ExactGroup, request);
    for (let g = 0; g < source.scans.length; g++) this.scan(source.scans[g] as ScanGroup, request);
  }

  private lookUp(group: ExactGroup, request: RequestView): void {
    if (group.probe.field === Field.QueryParam) {
      const values = paramValues(group.probe, request);
      for (let i = 0; i < values.length; i++) this.add(group.rulesByValue.get(values[i] as string));
      return;
    }
    const value = fieldValue(group.probe, request);
    if (value !== undefined) this.add(group.rulesByValue.get(value));
  }

  private scan(group: ScanGroup, request: RequestView): void {
    const guards = group.guards;
    if (group.probe.field === Field.QueryParam) {
      const values = paramValues(group.probe, request);
      for (let i = 0; i < values.length; i++) {
        for (let k = 0; k < guards.length; k++)
          if (test(guards[k] as Condition, values[i] as string))
            this.hits.push(group.rules[k] as number);
      }
      return;
    }
    const value = fieldValue(group.probe, request);
    if (value === undefined) return;
    for (let k = 0; k < guards.length; k++)
      if (test(guards[k] as Condition, value)) this.hits.push(group.rules[k] as number);
  }

  private add(rules: readonly number[] | undefined): void {
    if (rules !== undefined)
      for (let i = 0; i < rules.length; i++) this.hits.push(rules[i] as number);
  }
}

/** The raw request value `source`'s groups derive theirs from (undefined: an absent header). */
function rawValue(source: Source, info: RequestInfo): string | undefined {
  switch (source.field) {
    case Field.Path:
      return info.path;
    case Field.Query:
      return info.query;
    case Field.UserAgent:
      return info.userAgent;
    case Field.Host:
      return info.host;
    case Field.Method:
      return info.method;
    default:
      return info.headers[source.name];
  }
}

/** Sorts a short list of rule indices in place and drops repeats (a parameter given twice). */
function sortUnique(list: number[]): void {
  list.sort((a, b) => a - b);
  let kept = 1;
  for (let i = 1; i < list.length; i++)
    if (list[i] !== list[kept - 1]) list[kept++] = list[i] as number;
  list.length = kept;
}
