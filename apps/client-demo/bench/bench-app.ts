/**
 * The demo app as `bench:middleware` runs it: the production process (`runDemo`, configured by
 * the same DEMO_* and RAMPART_* variables) composed with what only the benchmark needs, from the
 * app's own factory options:
 *
 * - the probes it reads outside its timed windows (`bench-routes.ts`), always;
 * - at the WAF's place in the stack, by BENCH_APP_STAGE:
 *   - `waf` (default): the WAF's middleware, as shipped;
 *   - `deferred`: the WAF (started with RAMPART_MODE=off), then requests held to the end of
 *     their event-loop turn as batched evaluation holds them (`turn-deferral.ts`);
 *   - `switch`: the WAF or that holding alone, switched at run time (`WafSwitch`).
 */
import { runDemoOrExit } from '@rampart/client-demo/server';
import { benchRoutes } from './bench-routes.ts';
import { deferToTurnEnd, WafSwitch } from './turn-deferral.ts';

/** The stages `BENCH_APP_STAGE` chooses from. */
export type AppStage = 'waf' | 'deferred' | 'switch';

const stage = process.env.BENCH_APP_STAGE ?? 'waf';

runDemoOrExit((waf) => {
  switch (stage) {
    case 'waf':
      return { wafStage: [waf.middleware], extraRoutes: benchRoutes(waf) };
    case 'deferred':
      return { wafStage: [waf.middleware, deferToTurnEnd()], extraRoutes: benchRoutes(waf) };
    case 'switch': {
      const wafSwitch = new WafSwitch(waf.middleware);
      return { wafStage: [wafSwitch.middleware], extraRoutes: benchRoutes(waf, wafSwitch) };
    }
    default:
      throw new Error(`BENCH_APP_STAGE must be waf, deferred or switch (got "${stage}")`);
  }
});
