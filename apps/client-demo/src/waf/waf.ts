/**
 * The WAF, as the app uses it: `@rampart/waf-client` created once per process.
 *
 * Options come from the `RAMPART_*` environment (RAMPART_MODE=off|monitor|enforce,
 * RAMPART_HUB_URL, RAMPART_SITE_KEY, RAMPART_DATA_DIR, ...), read and validated by the client
 * itself; the demo only supplies a default data directory inside its own. The client starts
 * syncing at once and never blocks requests on it: until its first snapshot is in place, its
 * fail mode applies.
 */

import { createRampart } from '@rampart/waf-client/rampart';
import type { Request } from 'express';
import type { WafOutcome } from '../middleware/server-timing.js';

export type RampartClient = ReturnType<typeof createRampart>;
export type RampartClientOptions = NonNullable<Parameters<typeof createRampart>[0]>;

export interface Waf {
  readonly client: RampartClient;
  /** The mode the client runs in (resolved from options and RAMPART_MODE). */
  readonly mode: string;
  readonly middleware: RampartClient['middleware'];
  /** What the middleware left on the request (`req.rampart`), if it ran. */
  outcome(req: Request): WafOutcome | undefined;
  /** Resolves once the first sync attempt finished (a snapshot is in use, or it failed). */
  ready(): Promise<void>;
  stats(): ReturnType<RampartClient['stats']>;
  close(): Promise<void>;
}

export function createWaf(options: RampartClientOptions = {}): Waf {
  const client = createRampart(options);
  return {
    client,
    mode: String(client.stats().mode ?? options.mode ?? process.env.RAMPART_MODE ?? 'enforce'),
    middleware: client.middleware,
    outcome: (req) => (req as Request & { rampart?: WafOutcome }).rampart,
    ready: () => client.ready(),
    stats: () => client.stats(),
    close: () => client.close(),
  };
}
