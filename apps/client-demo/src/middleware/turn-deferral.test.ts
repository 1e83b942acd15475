import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { deferToTurnEnd, WafSwitch } from './turn-deferral.js';

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

  it('WafSwitch sends requests through the WAF, or only holds them, as switched', async () => {
    const throughWaf: number[] = [];
    const wafSwitch = new WafSwitch((_req, _res, next) => {
      throughWaf.push(1);
      next();
    });
    const continued: string[] = [];
    const send = (name: string) =>
      wafSwitch.middleware(
        {} as Request,
        {} as Response,
        (() => continued.push(name)) as NextFunction,
      );
    send('a');
    wafSwitch.useWaf = false;
    send('b');
    await endOfTurn();
    expect([throughWaf.length, continued]).toEqual([1, ['a', 'b']]);
  });
});
