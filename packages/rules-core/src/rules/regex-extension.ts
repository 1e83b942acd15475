/**
 * The extension point through which `regex` patterns get a regex engine.
 *
 * Rampart never runs request-controlled input through a backtracking regex: a WAF that a crafted
 * path can stall is a denial-of-service tool. Regex patterns therefore use Rampart's own
 * linear-time engine (the sregex dialect of `regex/`), installed here by default. The extension
 * point stays so an embedder can swap it; with none installed, rule validation rejects
 * `match: "regex"` with a clear error instead of silently falling back to `RegExp`.
 */
import { sregexEngine } from '../regex/waf-engine.js';

/** A compiled pattern. `test` must run in time linear in `input.length`. */
export interface RegexMatcher {
  test(input: string): boolean;
}

export interface RegexEngine {
  /** Compiles `pattern` with `flags` (a subset of "i"); throws an Error naming the problem. */
  compile(pattern: string, flags: string): RegexMatcher;
}

let registered: RegexEngine | undefined = sregexEngine;

/** Replaces the engine used by validation and evaluation of regex patterns (process-wide). */
export function registerRegexEngine(engine: RegexEngine | undefined): void {
  registered = engine;
}

/** The registered engine, or undefined when regex patterns are not available. */
export function regexEngine(): RegexEngine | undefined {
  return registered;
}
