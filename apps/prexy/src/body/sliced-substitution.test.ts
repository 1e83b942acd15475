import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { compileRuleSet } from '@rampart/rules-core/substitution/rule-set';
import { Substituter } from '@rampart/rules-core/substitution/substituter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SLICE_BYTES, SlicedSubstituter, SlicedSubstitution } from './sliced-substitution.js';

const set = compileRuleSet(
  [
    { pattern: 'ab+c', replacement: '<$&>', flags: 'g' },
    { pattern: 'c(a+)', replacement: '[$1]', flags: 'g' },
  ],
  { matchKind: 'leftmost-first' },
);

function whole(body: Buffer): Buffer {
  const s = new Substituter(set);
  return Buffer.concat([s.feed(body), s.end()]);
}

async function sliced(chunks: readonly Buffer[]): Promise<Buffer> {
  const stage = new SlicedSubstitution(set, 8192, () => undefined);
  const out = buffer(stage);
  await pipeline(Readable.from(chunks), stage);
  return out;
}

describe('SlicedSubstitution', () => {
  it('gives the bytes of the engine fed the whole body, however the body is chunked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x'), maxLength: 40 }), {
          maxLength: 10,
        }),
        async (pieces) => {
          const chunks = pieces.map((p) => Buffer.from(p));
          expect((await sliced(chunks)).equals(whole(Buffer.concat(chunks)))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('feeds a large chunk in slices that yield to the event loop, and counts engine time', async () => {
    const body = Buffer.from('xxabbbcxxcaaa'.repeat((200 * SLICE_BYTES) / 13));
    const substituter = new SlicedSubstituter(set, 8192, () => undefined);
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const out: Buffer[] = [];
    await new Promise<void>((resolve, reject) =>
      substituter.feed(
        body,
        (b) => out.push(b),
        (error) => (error ? reject(error) : resolve()),
      ),
    );
    counting = false;
    out.push(substituter.end());
    expect(Buffer.concat(out).equals(whole(body))).toBe(true);
    expect(turns).toBeGreaterThan(0);
    expect(substituter.substitutionMs).toBeGreaterThan(0);
    expect(substituter.stats.matchedRules).toEqual([0, 1]);
  });
});
