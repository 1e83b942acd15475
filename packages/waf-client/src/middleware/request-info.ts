/**
 * What the middleware leaves on `req.rampart` for the app (as Wafris exposes notifications), and
 * the one implementation of it, whose request id is made when first read.
 *
 * Why lazily: a new UUID cost about 0.5 us per request in the client-demo's profile (refilling
 * the random pool, formatting), about a tenth of everything the WAF does for a passing request,
 * and most passing requests never need an id: nothing refuses them and their report is a count,
 * not an event. A refusal, a queued report event or the app reading `requestId` makes it; every
 * later read returns the same id.
 */
import type { Decision } from '@rampart/rules-core/evaluator/decision';
import type { RampartMode } from '../config/options.js';
import { requestIdOf } from './request-id.js';

export interface RampartRequestInfo {
  /** The incoming `X-Request-Id` when well formed, else a new UUID. */
  readonly requestId: string;
  /** The evaluator's decision; null when nothing was evaluated (mode off, no snapshot, error). */
  readonly decision: Decision | null;
  /** The resolved client address (trusted proxies honoured), canonical text. */
  readonly clientIp: string;
  readonly mode: RampartMode;
  readonly timings: { readonly resolveIpMs: number; readonly evaluateMs: number };
}

export type RequestTimings = RampartRequestInfo['timings'];

export class RampartInfo implements RampartRequestInfo {
  readonly #idHeader: string | string[] | undefined;
  #id: string | undefined;

  /** `idHeader`: the request's `X-Request-Id` header, read now; the id is decided on first use. */
  constructor(
    idHeader: string | string[] | undefined,
    readonly decision: Decision | null,
    readonly clientIp: string,
    readonly mode: RampartMode,
    readonly timings: RequestTimings,
  ) {
    this.#idHeader = idHeader;
  }

  get requestId(): string {
    this.#id ??= requestIdOf(this.#idHeader);
    return this.#id;
  }

  /** The plain object an app logging `JSON.stringify(req.rampart)` expects, id included. */
  toJSON(): RampartRequestInfo {
    return {
      requestId: this.requestId,
      decision: this.decision,
      clientIp: this.clientIp,
      mode: this.mode,
      timings: this.timings,
    };
  }
}
