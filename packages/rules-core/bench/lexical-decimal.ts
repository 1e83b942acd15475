/**
 * The anchor's "lexical decimal" IP encoding, reproduced for the benchmark (WAF-SPEC, Anchor
 * behaviour).
 *
 * wafris-rb turns an address into `IPAddr.new(ip).to_i`, writes that integer in decimal and
 * left-pads it with zeros to 39 characters (2^128 has 39 digits), so that comparing the strings
 * compares the numbers and a text index can answer range questions. IPv4 and IPv6 share that one
 * number space with no family marker: `1.2.3.5` and the IPv4-compatible `::102:305` both become
 * `...016909061` (WAF-SPEC defect 3). This module keeps that defect on purpose: the benchmark must
 * measure the layout the anchor actually ships, not a corrected one.
 */
import { IpParseError, parseIpInto } from '@rampart/rules-core/ip/address';

/** Digits of 2^128 - 1: every address fits. */
export const LEXICAL_DECIMAL_WIDTH = 39;

/** The prefix `::ffff:0:0/96`; {@link parseIpInto} folds it into IPv4, the anchor does not. */
const MAPPED_PREFIX = 0xffffn << 32n;

/** A non-negative integer below 2^128 as 39 zero-padded decimal digits. */
export function lexicalDecimal(value: bigint | number): string {
  return String(value).padStart(LEXICAL_DECIMAL_WIDTH, '0');
}

const words = new Uint32Array(4);

/**
 * The anchor's key for an address given as text, in either family.
 *
 * IPv4 text becomes its uint32; IPv6 text becomes its 128-bit value, including IPv4-mapped text
 * (`::ffff:1.2.3.4` is `0xffff01020304` to Ruby's IPAddr, not `1.2.3.4`). Throws
 * {@link IpParseError} on text that is not an address, as `IPAddr.new` raises.
 */
export function ipToLexicalDecimal(text: string): string {
  const family = parseIpInto(text, words);
  if (family === 4) {
    const v4 = words[0] as number;
    // Written as IPv6 (`::ffff:a.b.c.d`): the anchor keeps the IPv6 value.
    return text.includes(':') ? lexicalDecimal(MAPPED_PREFIX | BigInt(v4)) : lexicalDecimal(v4);
  }
  if (family === 6) return lexicalDecimal(wordsToBigInt(words));
  throw new IpParseError(text, 'not an IPv4 or IPv6 address');
}

function wordsToBigInt(w: Uint32Array): bigint {
  return (
    (BigInt(w[0] as number) << 96n) |
    (BigInt(w[1] as number) << 64n) |
    (BigInt(w[2] as number) << 32n) |
    BigInt(w[3] as number)
  );
}
