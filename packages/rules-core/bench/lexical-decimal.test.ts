import { IpParseError } from '@rampart/rules-core/ip/address';
import { describe, expect, it } from 'vitest';
import { ipToLexicalDecimal, LEXICAL_DECIMAL_WIDTH, lexicalDecimal } from './lexical-decimal.ts';

describe('lexical decimal (the anchor encoding)', () => {
  it('pads to 39 digits so text order is numeric order', () => {
    expect(lexicalDecimal(0)).toBe('0'.repeat(39));
    expect(lexicalDecimal((1n << 128n) - 1n)).toBe('340282366920938463463374607431768211455');
    const keys = [9n, 10n, 255n, 1n << 32n, 1n << 100n].map(lexicalDecimal);
    expect([...keys].sort()).toEqual(keys);
    for (const k of keys) expect(k).toHaveLength(LEXICAL_DECIMAL_WIDTH);
  });

  it('encodes IPv4 as its uint32 and IPv6 as its 128-bit value', () => {
    expect(ipToLexicalDecimal('1.2.3.4')).toBe(lexicalDecimal(16909060));
    expect(ipToLexicalDecimal('2001:db8::1')).toBe(
      lexicalDecimal(0x20010db8000000000000000000000001n),
    );
  });

  it('keeps defect 3: IPv4-compatible IPv6 collides with IPv4', () => {
    expect(ipToLexicalDecimal('::102:305')).toBe(ipToLexicalDecimal('1.2.3.5'));
  });

  it('keeps IPv4-mapped text as its IPv6 value, as Ruby IPAddr does', () => {
    expect(ipToLexicalDecimal('::ffff:1.2.3.4')).toBe(lexicalDecimal(0xffff01020304n));
  });

  it('rejects text that is not an address', () => {
    expect(() => ipToLexicalDecimal('1.2.3')).toThrow(IpParseError);
  });
});
