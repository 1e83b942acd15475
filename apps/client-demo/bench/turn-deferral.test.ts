import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { deferToTurnEnd, WAF_VARIANT_HEADER, WafSwitch } from './turn-deferral.ts';

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
    const send = (name: string, headers: Record<string, string> = {}) =>
      wafSwitch.middleware(
        { headers } as unknown as Request,
        {} as Response,
        (() => continued.push(name)) as NextFunction,
      );
    send('a');
    wafSwitch.useWaf = false;
    send('b');
    await endOfTurn();
    expect([throughWaf.length, continued]).toEqual([1, ['a', 'b']]);
  });

  it('WafSwitch lets one request pick its path by header, whatever the switch says', async () => {
    const throughWaf: string[] = [];
    const wafSwitch = new WafSwitch((req, _res, next) => {
      throughWaf.push(req.headers[WAF_VARIANT_HEADER] as string);
      next();
    });
    const send = (variant: string) =>
      wafSwitch.middleware(
        { headers: { [WAF_VARIANT_HEADER]: variant } } as unknown as Request,
        {} as Response,
        (() => {}) as NextFunction,
      );
    wafSwitch.useWaf = false;
    send('waf');
    wafSwitch.useWaf = true;
    send('deferred');
    send('anything else'); // only "waf" chooses the WAF
    await endOfTurn();
    expect(throughWaf).toEqual(['waf']);
  });
});
