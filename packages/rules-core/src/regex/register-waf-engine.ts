/**
 * Registers the sregex engine as the WAF's regex engine (process-wide). Call once at start-up,
 * before validating or evaluating rule sets that use `match: "regex"`.
 */
import { registerRegexEngine } from '../rules/regex-extension.js';
import { sregexEngine } from './waf-engine.js';

export function registerSregexEngine(): void {
  registerRegexEngine(sregexEngine);
}
