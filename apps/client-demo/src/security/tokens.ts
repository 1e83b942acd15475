/** Comparing secrets without telling an attacker, through timing, how much of a guess was right. */
import { timingSafeEqual } from 'node:crypto';

/** Constant-time string equality (false at once when the lengths differ, which is public). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
