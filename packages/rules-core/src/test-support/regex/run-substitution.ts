/**
 * Test helpers: run a rule set over a body with a given chunking and collect the output.
 */
import {
  compileRuleSet,
  type RuleSetOptions,
  type SubstitutionRule,
} from '../../substitution/rule-set.js';
import { Substituter, type SubstituterOptions } from '../../substitution/substituter.js';

export type Chunking = 'whole' | 'bytes' | readonly number[];

/** Splits `body` at the given cut points (absolute offsets), or into single bytes. */
export function split(body: Uint8Array, chunking: Chunking): Uint8Array[] {
  if (chunking === 'whole') return [body];
  if (chunking === 'bytes') return Array.from(body, (_, i) => body.subarray(i, i + 1));
  const cuts = [...chunking, body.length];
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of cuts) {
    out.push(body.subarray(from, cut));
    from = cut;
  }
  return out;
}

export interface RunResult {
  readonly output: Buffer;
  readonly warnings: string[];
  readonly substituter: Substituter;
}

export function runChunks(
  rules: readonly SubstitutionRule[],
  body: Uint8Array | string,
  chunking: Chunking = 'whole',
  options: RuleSetOptions & SubstituterOptions = {},
): RunResult {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
  const set = compileRuleSet(rules, options);
  const warnings: string[] = [];
  const substituter = new Substituter(set, { warn: (m) => warnings.push(m), ...options });
  const parts: Buffer[] = [];
  for (const chunk of split(bytes, chunking)) parts.push(Buffer.from(substituter.feed(chunk)));
  parts.push(substituter.end());
  return { output: Buffer.concat(parts), warnings, substituter };
}

/** Output as a latin1 string (byte-exact for any body). */
export function substitute(
  rules: readonly SubstitutionRule[],
  body: Uint8Array | string,
  chunking: Chunking = 'whole',
  options: RuleSetOptions & SubstituterOptions = {},
): string {
  return runChunks(rules, body, chunking, options).output.toString('latin1');
}

/** Every chunking worth trying for a short body: whole, 1-byte, and every single split point. */
export function chunkings(length: number): Chunking[] {
  const out: Chunking[] = ['whole', 'bytes'];
  for (let i = 1; i < length; i++) out.push([i]);
  return out;
}
