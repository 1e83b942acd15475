/**
 * The context an assertion needs at a position, packed into small integers.
 *
 * "Behind" facts are known as soon as the previous byte is; "ahead" facts need the next byte
 * (or the end of the body). Simulations keep an assertion that needs the next byte pending until
 * that byte arrives — this is why the lazy DFA reports matches one byte late, and why a match
 * ending at a chunk boundary is only settled by the next chunk or by `end()`.
 */
import { Look } from '../syntax/ast.js';
import { isWordByte } from '../syntax/byte-set.js';

/** Behind facts. */
export const AT_TEXT_START = 1;
export const AFTER_NEWLINE = 2;
export const AFTER_WORD = 4;

/** A "next byte" value meaning the end of the body. */
export const END_OF_INPUT = 256;

/** The behind facts at a position whose previous byte is `prev` (-1: start of the body). */
export function behindFacts(prev: number): number {
  if (prev < 0) return AT_TEXT_START;
  return (prev === 0x0a ? AFTER_NEWLINE : 0) | (isWordByte(prev) ? AFTER_WORD : 0);
}

/** Assertions decidable from the behind facts alone. */
export const BEHIND_LOOKS = Look.LineStart | Look.TextStart;

/** Whether `look` holds given behind facts and the next byte (or END_OF_INPUT). */
export function lookHolds(look: number, behind: number, next: number): boolean {
  switch (look) {
    case Look.LineStart:
      return (behind & (AT_TEXT_START | AFTER_NEWLINE)) !== 0;
    case Look.TextStart:
      return (behind & AT_TEXT_START) !== 0;
    case Look.LineEnd:
      return next === END_OF_INPUT || next === 0x0a;
    case Look.TextEnd:
      return next === END_OF_INPUT;
    case Look.WordBoundary:
      return ((behind & AFTER_WORD) !== 0) !== (next !== END_OF_INPUT && isWordByte(next));
    case Look.NotWordBoundary:
      return ((behind & AFTER_WORD) !== 0) === (next !== END_OF_INPUT && isWordByte(next));
    default:
      return false;
  }
}

/** Behind facts that matter for an NFA using `looks`: others are masked out of DFA states. */
export function relevantBehind(looks: number): number {
  let mask = 0;
  if (looks & Look.TextStart) mask |= AT_TEXT_START;
  if (looks & Look.LineStart) mask |= AT_TEXT_START | AFTER_NEWLINE;
  if (looks & (Look.WordBoundary | Look.NotWordBoundary)) mask |= AFTER_WORD;
  return mask;
}
