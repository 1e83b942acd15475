/**
 * Compiled substitution rule sets, cached by content: the same rules (in the same order, with
 * the same match kind) compile once per process, however many sites, prefixes or configuration
 * versions name them. A new configuration that changes nothing in a rule set (say, a snapshot
 * whose WAF rules changed) therefore compiles nothing, and responses that started under the old
 * configuration keep the very object they began with.
 */
import { createHash } from 'node:crypto';
import type { SubstitutionRuleConfig } from '@rampart/rules-core/proxy-config/proxy-config';
import {
  type CompiledRuleSet,
  compileRuleSet,
  type MatchKind,
} from '@rampart/rules-core/substitution/rule-set';

export interface CachedRuleSet {
  /** Content address of the rules and match kind: equal ids, equal behaviour. */
  readonly id: string;
  readonly set: CompiledRuleSet;
  readonly rules: readonly SubstitutionRuleConfig[];
  readonly matchKind: MatchKind;
  /** For a narrowed set (see {@link CompiledSets.narrowed}): the id of the set it came from. */
  readonly parent?: string;
}

export class CompiledSets {
  private readonly byId = new Map<string, CachedRuleSet>();
  /** Narrowed sets by parent id and rule indices: found per response without hashing rules. */
  private readonly narrowings = new Map<string, CachedRuleSet>();
  private compiled = 0;

  /** How many rule sets this cache has compiled (not found) so far. */
  get compilations(): number {
    return this.compiled;
  }

  get size(): number {
    return this.byId.size;
  }

  /** The compiled form of `rules`; throws `RuleSetError` when they do not compile. */
  get(
    rules: readonly SubstitutionRuleConfig[],
    matchKind: MatchKind,
    parent?: string,
  ): CachedRuleSet {
    const id = ruleSetId(rules, matchKind);
    let cached = this.byId.get(id);
    if (cached === undefined) {
      const set = compileRuleSet(rules, { matchKind });
      this.compiled++;
      cached =
        parent === undefined
          ? { id, set, rules, matchKind }
          : { id, set, rules, matchKind, parent };
      this.byId.set(id, cached);
    }
    return cached;
  }

  /**
   * `from` reduced to the rules whose indices are in `matched` (ascending), in their order: what
   * a remembered asset runs (see `match-bitmap.ts`). `from` itself when every rule matched.
   */
  narrowed(from: CachedRuleSet, matched: readonly number[]): CachedRuleSet {
    if (matched.length === from.rules.length) return from;
    const key = `${from.id}/${matched.join(',')}`;
    let narrowed = this.narrowings.get(key);
    if (narrowed === undefined) {
      const rules = matched.flatMap((i) => {
        const rule = from.rules[i];
        return rule === undefined ? [] : [rule];
      });
      narrowed = this.get(rules, from.matchKind, from.id);
      this.narrowings.set(key, narrowed);
    }
    return narrowed;
  }

  /** Forgets every set not in `live`, nor narrowed from one in it (after a configuration swap). */
  retain(live: ReadonlySet<string>): void {
    for (const [id, cached] of this.byId) {
      if (live.has(id) || (cached.parent !== undefined && live.has(cached.parent))) continue;
      this.byId.delete(id);
    }
    for (const [key, narrowed] of this.narrowings) {
      if (!this.byId.has(narrowed.id)) this.narrowings.delete(key);
    }
  }
}

/** The content address of a rule list and its match kind. */
export function ruleSetId(rules: readonly SubstitutionRuleConfig[], matchKind: MatchKind): string {
  const canonical = JSON.stringify([
    matchKind,
    rules.map((r) => [r.pattern, r.replacement, [...r.flags].sort().join('')]),
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}
