import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMemo } from './bounded-memo.js';

describe('BoundedMemo', () => {
  it('returns what was stored for an address, and nothing for others', () => {
    const memo = new BoundedMemo<number>(8);
    memo.set('192.0.2.1', 1);
    expect(memo.get('192.0.2.1')).toBe(1);
    expect(memo.get('192.0.2.2')).toBeUndefined();
  });

  it('never holds more than its capacity, whatever the traffic', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 64 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 500 }),
        (capacity, addresses) => {
          const memo = new BoundedMemo<number>(capacity);
          for (const a of addresses) {
            if (memo.get(String(a)) === undefined) memo.set(String(a), a);
            expect(memo.size).toBeLessThanOrEqual(capacity);
          }
        },
      ),
    );
  });

  it('never returns a value stored for another address', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 300 }), (addresses) => {
        const memo = new BoundedMemo<number>(10);
        for (const a of addresses) {
          const found = memo.get(String(a));
          if (found === undefined) memo.set(String(a), a);
          else expect(found).toBe(a);
        }
      }),
    );
  });

  it('keeps an address in use through a flood of addresses seen once', () => {
    const memo = new BoundedMemo<string>(100);
    memo.set('203.0.113.7', 'kept');
    for (let i = 0; i < 10_000; i++) {
      memo.set(`10.0.${i >> 8}.${i & 255}`, 'flood');
      if (i % 40 === 0) expect(memo.get('203.0.113.7')).toBe('kept');
    }
    expect(memo.get('203.0.113.7')).toBe('kept');
    expect(memo.get('10.0.0.0')).toBeUndefined();
  });

  it('answers a key asked for twice in a row, and a new value stored for it, from its last lookup', () => {
    const memo = new BoundedMemo<number>(4);
    memo.set('192.0.2.1', 1);
    memo.set('192.0.2.2', 2);
    expect(memo.get('192.0.2.1')).toBe(1);
    expect(memo.get('192.0.2.1')).toBe(1);
    expect(memo.get('192.0.2.2')).toBe(2);
    memo.set('192.0.2.2', 22);
    expect(memo.get('192.0.2.2')).toBe(22);
    expect(memo.get('192.0.2.1')).toBe(1);
  });

  it('rejects a capacity below 2', () => {
    expect(() => new BoundedMemo(1)).toThrow(RangeError);
    expect(() => new BoundedMemo(2.5)).toThrow(RangeError);
  });

  it('finds a key stored from a slice of a longer string, by an equal string', () => {
    const memo = new BoundedMemo<number>(8);
    const url = `/products/${'x'.repeat(40)}?q=${'y'.repeat(10_000)}`;
    const path = url.slice(0, url.indexOf('?'));
    memo.set(path, 7);
    expect(memo.get(`/products/${'x'.repeat(40)}`)).toBe(7);
    expect(memo.get(path)).toBe(7);
  });
});
