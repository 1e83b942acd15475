/**
 * The WAF's regex engine (the `RegexEngine` extension point of `rules/regex-extension.ts`):
 * sregex-dialect patterns matched by the same lazy DFA as the substitution engine, so a crafted
 * path or header can never make a pattern backtrack.
 *
 * `test(input)` answers "is there a match anywhere", stopping at the first match state. The
 * string is matched as UTF-8 bytes (identical to its char codes when it is ASCII, which is the
 * common case and needs no encoding). Flags: a subset of "i". Each compiled matcher owns a small
 * DFA cache (256 KiB by default), so memory stays bounded whatever the traffic.
 */
import type { RegexEngine, RegexMatcher } from '../rules/regex-extension.js';
import { HAS_MATCH, LazyDfa, UNBUILT } from './lazy-dfa/lazy-dfa.js';
import { compileNfa } from './nfa/nfa.js';
import { parsePattern, RegexSyntaxError } from './syntax/parser.js';

const CACHE_BYTES = 256 * 1024;

export class SregexMatcher implements RegexMatcher {
  private readonly dfa: LazyDfa;
  private scratch = new Uint8Array(256);

  constructor(pattern: string, flags = '') {
    const bad = [...flags].find((f) => f !== 'i');
    if (bad !== undefined) throw new Error(`regex flag "${bad}" is not supported (only "i")`);
    let parsed: ReturnType<typeof parsePattern>;
    try {
      parsed = parsePattern(pattern, { caseInsensitive: flags.includes('i') });
    } catch (error) {
      if (error instanceof RegexSyntaxError) {
        throw new Error(`regex ${JSON.stringify(pattern)}: ${error.message}`);
      }
      throw error;
    }
    this.dfa = new LazyDfa(compileNfa([parsed]), { cacheBytes: CACHE_BYTES });
  }

  test(input: string): boolean {
    const bytes = this.encode(input);
    const dfa = this.dfa;
    let s = dfa.start(-1);
    for (let i = 0; i < bytes.length; i++) {
      const cls = dfa.classes[bytes[i] as number] as number;
      let t = dfa.trans[s + cls] as number;
      if (t === UNBUILT) t = dfa.build(s, cls);
      // The search is unanchored, so only a match can make a transition special here.
      if ((t & 3) !== 0 && (dfa.flags[((t >> 3) / dfa.stride) | 0] as number) & HAS_MATCH) {
        return true;
      }
      s = t >> 3;
    }
    return dfa.eoi(s).rule >= 0;
  }

  /** The UTF-8 bytes of `input`, without allocating when it is ASCII and fits the scratch. */
  private encode(input: string): Uint8Array {
    const n = input.length;
    if (n > this.scratch.length)
      this.scratch = new Uint8Array(Math.max(n, this.scratch.length * 2));
    for (let i = 0; i < n; i++) {
      const c = input.charCodeAt(i);
      if (c >= 0x80) return Buffer.from(input, 'utf8');
      this.scratch[i] = c;
    }
    return this.scratch.subarray(0, n);
  }
}

export const sregexEngine: RegexEngine = {
  compile(pattern: string, flags: string): RegexMatcher {
    return new SregexMatcher(pattern, flags);
  },
};
