import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { deferToTurnEnd } from './turn-deferral.js';

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('deferToTurnEnd (the benchmark reference for batched evaluation)', () => {
  it('holds requests to the end of their turn when the WAF would, in arrival order', async () => {
    const defer = deferToTurnEnd();
    const continued: number[] = [];
    const send = (i: number) =>
      defer({} as Request, {} as Response, (() => continued.push(i)) as NextFunction);
    for (let i = 0; i < 3; i++) send(i);
    expect(continued).toEqual([0]); // a lone first request after a quiet turn goes at once
    await endOfTurn();
    expect(continued).toEqual([0, 1, 2]);
    send(3); // the turn before was busy: this one waits too
    expect(continued).toEqual([0, 1, 2]);
    await endOfTurn();
    expect(continued).toEqual([0, 1, 2, 3]);
  });
});
