import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TurnBatch } from './turn-batch.js';

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A batch that records how each item ran: at once, or in which batch. */
function recording() {
  const ran: { item: number; how: 'now' | number }[] = [];
  let batches = 0;
  const batch = new TurnBatch<number>(
    (item) => ran.push({ item, how: 'now' }),
    (items) => {
      batches++;
      for (const item of items) ran.push({ item, how: batches });
    },
  );
  return { batch, ran };
}

describe('TurnBatch', () => {
  it('runs a lone item at once, and waits with the rest of a busy turn', async () => {
    const { batch, ran } = recording();
    batch.add(1);
    expect(ran).toEqual([{ item: 1, how: 'now' }]);
    batch.add(2);
    batch.add(3);
    expect(ran).toHaveLength(1);
    await endOfTurn();
    expect(ran.slice(1)).toEqual([
      { item: 2, how: 1 },
      { item: 3, how: 1 },
    ]);
    // after a busy turn, the first item of the next turn waits as well
    batch.add(4);
    expect(ran).toHaveLength(3);
    await endOfTurn();
    expect(ran.at(-1)).toEqual({ item: 4, how: 2 });
    // ... and after that quiet turn, a lone item goes at once again
    batch.add(5);
    expect(ran.at(-1)).toEqual({ item: 5, how: 'now' });
  });

  it('runs every item exactly once, in arrival order, within the turn it arrived in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(6), { maxLength: 12 }), async (turns) => {
        const { batch, ran } = recording();
        let next = 0;
        for (const size of turns) {
          const first = next;
          for (let i = 0; i < size; i++) batch.add(next++);
          await endOfTurn();
          // everything added in this turn has run by its end
          expect(ran.map((r) => r.item)).toEqual(Array.from({ length: next }, (_, i) => i));
          // at most the turn's first item ran at once
          expect(ran.slice(first + 1).every((r) => r.how !== 'now')).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
