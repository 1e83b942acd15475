import { describe, expect, it } from 'vitest';
import { assetKey, MatchBitmapCache } from './match-bitmap.js';

describe('assetKey', () => {
  it('names an asset by host, target and validator: a strong ETag, else Last-Modified', () => {
    const strong = assetKey('a.test', '/x?y', { etag: '"1"', 'last-modified': 'Mon' });
    expect(strong).toBe(assetKey('a.test', '/x?y', { etag: '"1"' }));
    expect(strong).not.toBe(assetKey('a.test', '/x?y', { etag: '"2"' }));
    expect(strong).not.toBe(assetKey('b.test', '/x?y', { etag: '"1"' }));
    expect(assetKey('a.test', '/x', { 'last-modified': 'Mon' })).toBeDefined();
  });

  it('remembers nothing without a validator, with a weak ETag, or marked no-store', () => {
    expect(assetKey('a.test', '/x', {})).toBeUndefined();
    expect(assetKey('a.test', '/x', { etag: 'W/"1"', 'last-modified': 'Mon' })).toBeUndefined();
    expect(
      assetKey('a.test', '/x', { etag: '"1"', 'cache-control': 'private, No-Store' }),
    ).toBeUndefined();
  });

  it('reads a field sent on several lines as undici hands it (an array)', () => {
    const multi = (headers: Record<string, string[] | string>) =>
      assetKey('a.test', '/x', headers as Parameters<typeof assetKey>[2]);
    expect(multi({ etag: '"1"', 'cache-control': ['public', 'max-age=60'] })).toBe(
      assetKey('a.test', '/x', { etag: '"1"' }),
    );
    expect(multi({ etag: '"1"', 'cache-control': ['public', 'no-store'] })).toBeUndefined();
    expect(multi({ etag: ['"1"', '"2"'] })).toBeUndefined();
    expect(multi({ 'last-modified': ['Mon', 'Tue'] })).toBeUndefined();
  });
});

describe('MatchBitmapCache', () => {
  it('returns what it was told for the same rule set, and misses for another', () => {
    const cache = new MatchBitmapCache(10_000);
    expect(cache.lookup('k', 'set-1')).toBeUndefined();
    cache.remember('k', 'set-1', [0, 3]);
    expect(cache.lookup('k', 'set-1')).toEqual([0, 3]);
    expect(cache.lookup('k', 'set-2')).toBeUndefined();
    expect([cache.hits, cache.misses]).toEqual([1, 2]);
  });

  it('keeps within its byte budget, least recently used out first', () => {
    const one = new MatchBitmapCache(1_000_000);
    one.remember('key-0', 'set', [1]);
    const entryBytes = one.bytes;
    const cache = new MatchBitmapCache(entryBytes * 3);
    for (const k of ['key-0', 'key-1', 'key-2']) cache.remember(k, 'set', [1]);
    cache.lookup('key-0', 'set'); // key-1 is now the least recently used
    cache.remember('key-3', 'set', [1]);
    expect(cache.size).toBe(3);
    expect(cache.bytes).toBeLessThanOrEqual(entryBytes * 3);
    expect(cache.lookup('key-1', 'set')).toBeUndefined();
    expect(cache.lookup('key-0', 'set')).toEqual([1]);
  });

  it('replaces an entry in place and refuses one larger than the whole budget', () => {
    const cache = new MatchBitmapCache(400);
    cache.remember('k', 'set', [1]);
    const bytes = cache.bytes;
    cache.remember('k', 'set', [2]);
    expect(cache.bytes).toBe(bytes);
    expect(cache.lookup('k', 'set')).toEqual([2]);
    cache.remember('x'.repeat(500), 'set', []);
    expect(cache.size).toBe(1);
  });
});
