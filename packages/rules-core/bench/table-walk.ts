/**
 * A probe of the machine's state for `bench:substitute`: the bare walk of a rule set's DFA
 * transition table over a page, one dependent table load per byte, with none of the engine's
 * work around it.
 *
 * On the shared reference machine the dense figure moves between about 40 and about 60 MB/s
 * over time, per core, with the code unchanged, and this walk's speed moves with it (the
 * rules-core README shows the measurements). Timed next to each run of the engine, it tells a
 * reader which state a figure was measured in.
 */
import { UNBUILT } from '@rampart/rules-core/regex/lazy-dfa/lazy-dfa';
import type { CompiledRuleSet } from '@rampart/rules-core/substitution/rule-set';

/**
 * Walks `set`'s transition table over `page` from the start state; an unbuilt transition goes
 * back to the start state (run the engine over the page first so that the walk sees the
 * states it uses). Returns the final state so that the walk cannot be optimised away.
 */
export function walkTable(set: CompiledRuleSet, page: Uint8Array): number {
  const dfa = set.dfa;
  const trans = dfa.trans;
  const classes = dfa.classes;
  const start = dfa.start(-1);
  let s = start;
  for (let i = 0; i < page.length; i++) {
    const t = trans[s + (classes[page[i] as number] as number)] as number;
    s = t === UNBUILT ? start : t >> 3;
  }
  return s;
}
