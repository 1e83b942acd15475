/**
 * The WAF, as the app uses it: `@rampart/waf-client`, created once per process.
 *
 * Options come from the `RAMPART_*` environment (RAMPART_MODE=off|monitor|enforce,
 * RAMPART_HUB_URL, RAMPART_SITE_KEY, RAMPART_DATA_DIR, RAMPART_TRUSTED_PROXIES, ...), read and
 * validated by the client itself (a bad value throws `RampartConfigError` naming it); the demo
 * only supplies a default data directory inside its own. The client starts syncing at once and
 * never blocks a request on it: until its first snapshot is in place, its fail mode applies.
 */
import {
  createRampart,
  type Rampart,
  type RampartOptions,
  type RampartStats,
} from '@rampart/waf-client/rampart';
import type { Request } from 'express';
import type { WafOutcome } from '../middleware/server-timing.js';

export interface Waf {
  readonly client: Rampart;
  /** The mode the client runs in (from options or RAMPART_MODE). */
  readonly mode: Rampart['config']['mode'];
  readonly middleware: Rampart['middleware'];
  /** What the middleware left on the request (`req.rampart`), if it ran. */
  outcome(req: Request): WafOutcome | undefined;
  /** Tells the hub how a login went (`rampart.signal`), the account only as a keyed hash. */
  signal(req: Request, kind: 'login_failed' | 'login_succeeded', account: string): void;
  /** Resolves once the first snapshot is in use or the first sync gave up. */
  ready(): Promise<void>;
  stats(): RampartStats;
  /** Stops syncing and flushes the reports. */
  close(): Promise<void>;
}

export function createWaf(options: RampartOptions = {}): Waf {
  const client = createRampart(options);
  return {
    client,
    mode: client.config.mode,
    middleware: client.middleware,
    outcome: (req) => req.rampart,
    signal: (req, kind, account) => client.signal(req, kind, { account }),
    ready: () => client.ready(),
    stats: () => client.stats(),
    close: () => client.close(),
  };
}
