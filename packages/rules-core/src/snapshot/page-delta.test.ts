import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyPageDelta,
  encodePageDelta,
  PageDeltaError,
  readPageDeltaHeader,
  sqlitePageSize,
} from './page-delta.js';

const PAGE = 512;

/** A "file" of 0 to 12 pages whose pages repeat a few patterns, so two files share some. */
const file = fc
  .array(fc.integer({ min: 0, max: 3 }), { maxLength: 12 })
  .chain((kinds) => fc.constant(Buffer.concat(kinds.map((k) => Buffer.alloc(PAGE, 0x41 + k)))));
/** A file derived from another: some pages rewritten, the end cut or extended. */
const edited = (base: Buffer) =>
  fc
    .record({
      writes: fc.array(
        fc.record({ page: fc.nat(15), byte: fc.nat(PAGE - 1), value: fc.nat(255) }),
        { maxLength: 6 },
      ),
      pages: fc.integer({ min: 0, max: 16 }),
    })
    .map(({ writes, pages }) => {
      const out = Buffer.alloc(pages * PAGE, 0x5a);
      base.copy(out, 0, 0, Math.min(base.length, out.length));
      for (const w of writes) if (w.page < pages) out[w.page * PAGE + w.byte] = w.value;
      return out;
    });

describe('page deltas', () => {
  it('rebuild exactly the new file from the base, whatever changed', () => {
    fc.assert(
      fc.property(
        file.chain((base) => fc.tuple(fc.constant(base), edited(base))),
        ([base, target]) => {
          const delta = encodePageDelta(base, target, { pageSize: PAGE });
          expect(applyPageDelta(base, delta).equals(target)).toBe(true);
        },
      ),
    );
  });

  it('carry only the pages that differ, plus those past the end of the base', () => {
    fc.assert(
      fc.property(
        file.chain((base) => fc.tuple(fc.constant(base), edited(base))),
        ([base, target]) => {
          const delta = encodePageDelta(base, target, { pageSize: PAGE });
          let differing = 0;
          for (let p = 0; p < target.length / PAGE; p++) {
            const page = target.subarray(p * PAGE, (p + 1) * PAGE);
            if (!page.equals(base.subarray(p * PAGE, (p + 1) * PAGE))) differing++;
          }
          expect(readPageDeltaHeader(delta).pages).toBe(differing);
        },
      ),
    );
  });

  it('never rebuild anything else: any damaged byte is refused', () => {
    fc.assert(
      fc.property(
        file.chain((base) => fc.tuple(fc.constant(base), edited(base))),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        ([base, target], where, flip) => {
          const delta = encodePageDelta(base, target, { pageSize: PAGE });
          const damaged = Buffer.from(delta);
          const at = where % damaged.length;
          damaged[at] = (damaged[at] ?? 0) ^ flip;
          expect(() => applyPageDelta(base, damaged)).toThrow(PageDeltaError);
        },
      ),
    );
  });

  it('write the hashes it is given, and refuse to apply when they are wrong', () => {
    const base = Buffer.alloc(2 * PAGE, 1);
    const target = Buffer.alloc(2 * PAGE, 2);
    const known = encodePageDelta(base, target, {
      pageSize: PAGE,
      baseSha256: createHash('sha256').update(base).digest('hex'),
      targetSha256: createHash('sha256').update(target).digest('hex'),
    });
    expect(known.equals(encodePageDelta(base, target, { pageSize: PAGE }))).toBe(true);
    const wrong = encodePageDelta(base, target, { pageSize: PAGE, targetSha256: 'a'.repeat(64) });
    expect(() => applyPageDelta(base, wrong)).toThrow('does not have the SHA-256 the delta names');
    expect(() => encodePageDelta(base, target, { pageSize: PAGE, baseSha256: 'x' })).toThrow(
      'invalid SHA-256',
    );
  });

  it('refuse a base other than the one the delta was made for', () => {
    const base = Buffer.alloc(2 * PAGE, 1);
    const target = Buffer.alloc(2 * PAGE, 2);
    const delta = encodePageDelta(base, target, { pageSize: PAGE });
    expect(() => applyPageDelta(Buffer.alloc(2 * PAGE, 3), delta)).toThrow(
      'the delta was made for another base file',
    );
  });

  it('refuse truncated deltas and foreign bytes with a reason', () => {
    const base = Buffer.alloc(PAGE, 1);
    const delta = encodePageDelta(base, Buffer.alloc(3 * PAGE, 2), { pageSize: PAGE });
    expect(() => applyPageDelta(base, delta.subarray(0, delta.length - 1))).toThrow(
      /the delta is \d+ bytes, its header says \d+/,
    );
    expect(() => applyPageDelta(base, Buffer.from('not a delta at all'))).toThrow(/bad magic/);
  });

  it('read the page size from an SQLite header, and refuse other files', () => {
    const header = Buffer.alloc(100);
    header.write('SQLite format 3\u0000', 0, 'latin1');
    header.writeUInt16BE(4096, 16);
    expect(sqlitePageSize(header)).toBe(4096);
    header.writeUInt16BE(1, 16);
    expect(sqlitePageSize(header)).toBe(65536);
    header.writeUInt16BE(1000, 16);
    expect(() => sqlitePageSize(header)).toThrow('invalid SQLite page size 1000');
    expect(() => sqlitePageSize(Buffer.alloc(100))).toThrow('not an SQLite file');
  });
});
