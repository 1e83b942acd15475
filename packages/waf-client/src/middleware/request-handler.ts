/**
 * What happens to one request, independent of the framework: resolve the client address,
 * evaluate with rules-core, decide the answer, record the report. Synchronous and allocation-light;
 * the adapters (Connect/node:http middleware, Fastify hook) only apply the resulting verdict.
 *
 * | decision | enforce mode | monitor mode (global, or the rule's) |
 * | --- | --- | --- |
 * | block | configured block response (default 403) | pass, reported |
 * | rate_limit | 429 + Retry-After + RateLimit/RateLimit-Policy | pass, reported |
 * | allow, pass | next | next |
 * | pass counted by a rate limit | next (+ RateLimit/RateLimit-Policy with `rateLimitHeaders: 'all'`) | next |
 * | no snapshot loaded / WAF error | fail mode: open = next, closed = 503 | next |
 *
 * Every refusal carries `X-Request-Id`. A failure inside this code is caught here, counted,
 * logged (throttled) and turned into the fail-mode verdict: it never reaches the app.
 *
 * When the request's span is recording (an OpenTelemetry SDK in the app sampled it), a refusal,
 * a monitored match or a failure is recorded as its child span, a plain pass as attributes of
 * it, and the report event names the request's trace (`telemetry/waf-spans.ts`); otherwise
 * tracing costs one context lookup.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Span } from '@opentelemetry/api';
import type { Decision } from '@rampart/rules-core/evaluator/decision';
import type { RequestInfo } from '@rampart/rules-core/evaluator/request';
import { resolveClientIp } from '../client-ip/client-ip.js';
import type { TrustedProxies } from '../client-ip/trusted-proxies.js';
import type { RampartConfig, RampartMode } from '../config/options.js';
import { describeError, type GuardedLogger } from '../logging/logger.js';
import type { ReportFlusher } from '../reports/report-flusher.js';
import {
  type Outcome,
  REPORT_TEXT_LIMITS,
  type ReportAction,
  type ReportQueue,
  reportText,
} from '../reports/report-queue.js';
import {
  blockRefusal,
  type Refusal,
  rateLimitHeaders,
  rateLimitRefusal,
  unavailableRefusal,
} from '../responses/responses.js';
import type { Stats } from '../stats/stats.js';
import type { ActiveSnapshot } from '../sync/active-snapshot.js';
import {
  annotatePass,
  recordEvaluation,
  recordingSpan,
  traceparentOf,
} from '../telemetry/waf-spans.js';
import { RampartInfo, type RampartRequestInfo } from './request-info.js';

export interface Verdict {
  readonly info: RampartRequestInfo;
  /** When set, answer with it and do not call the app. */
  readonly refusal: Refusal | null;
  /** When set (and no refusal), add these headers and continue. */
  readonly passHeaders: Readonly<Record<string, string>> | null;
}

/** Something that wants to hear about request volume (the sync's request-count trigger). */
export interface RequestCountListener {
  nudge(): void;
}

const NO_TIMINGS = Object.freeze({ resolveIpMs: 0, evaluateMs: 0 });

export class RequestHandler {
  private sinceNudge = 0;

  constructor(
    private readonly config: RampartConfig,
    private readonly proxies: TrustedProxies,
    private readonly active: ActiveSnapshot,
    private readonly queue: ReportQueue,
    private readonly flusher: ReportFlusher | null,
    private readonly stats: Stats,
    private readonly logger: GuardedLogger,
    private readonly sync: RequestCountListener | null,
  ) {}

  handle(req: IncomingMessage): Verdict {
    this.stats.requests++;
    const mode = this.config.mode;
    if (mode === 'off') return this.off(req);
    if (
      this.sync &&
      this.config.syncEveryRequests > 0 &&
      ++this.sinceNudge >= this.config.syncEveryRequests
    ) {
      this.sinceNudge = 0;
      this.sync.nudge();
    }
    let clientIp = '';
    let decision: Decision | null = null;
    const span = recordingSpan();
    const started = performance.now();
    let resolved = started;
    let evaluated = started;
    try {
      clientIp = resolveClientIp(req, this.proxies);
      resolved = performance.now();
      const installed = this.active.current;
      if (installed === null) {
        this.stats.noSnapshot++;
        return this.failed(req, clientIp, mode, false, span);
      }
      decision = installed.evaluator.evaluate(requestInfo(req, clientIp));
      evaluated = performance.now();
      const info = new RampartInfo(req.headers['x-request-id'], decision, clientIp, mode, {
        resolveIpMs: resolved - started,
        evaluateMs: evaluated - resolved,
      });
      return this.act(req, info, decision, mode, span, started, evaluated);
    } catch (error) {
      this.stats.errors++;
      this.logger.throttled(
        'request-error',
        'error',
        `evaluation failed; the request ${this.config.failMode === 'open' || mode === 'monitor' ? 'passed' : 'was refused'} (fail mode ${this.config.failMode}): ${describeError(error)}`,
      );
      const verdict = this.failed(req, clientIp, mode, true, span);
      if (span !== undefined) {
        recordEvaluation(span, {
          startedMs: started,
          endedMs: performance.now(),
          clientIp,
          method: req.method,
          decision: null,
          outcome: verdict.refusal === null ? 'failed_open' : 'failed_closed',
          error,
        });
      }
      return verdict;
    }
  }

  /**
   * An adapter could not apply a verdict (writing the refusal or a header threw): counted and
   * logged; the adapter then lets the request continue unless a refusal was already started.
   */
  adapterFailed(error: unknown): void {
    this.stats.errors++;
    this.logger.throttled(
      'adapter-error',
      'error',
      `could not apply the WAF verdict: ${describeError(error)}`,
    );
  }

  private act(
    req: IncomingMessage,
    info: RampartRequestInfo,
    decision: Decision,
    mode: RampartMode,
    span: Span | undefined,
    startedMs: number,
    evaluatedMs: number,
  ): Verdict {
    const action = decision.action;
    this.stats.decisions[action]++;
    const refusing = action === 'block' || action === 'rate_limit';
    const enforced = mode === 'enforce' && decision.mode === 'enforce';
    let refusal: Refusal | null = null;
    let passHeaders: Readonly<Record<string, string>> | null = null;
    let outcome: Outcome = 'passed';
    if (refusing && enforced) {
      if (action === 'block') {
        refusal = blockRefusal(this.config.blockResponse, info.requestId);
        outcome = 'blocked';
        this.stats.refused.blocked++;
      } else {
        // The evaluator always attaches the limit that decided a rate_limit decision.
        refusal = rateLimitRefusal(
          decision.rateLimit as NonNullable<Decision['rateLimit']>,
          info.requestId,
        );
        outcome = 'rate_limited';
        this.stats.refused.rateLimited++;
      }
    } else {
      if (refusing) this.stats.monitored++;
      if (
        mode === 'enforce' &&
        action === 'pass' &&
        decision.rateLimit &&
        this.config.rateLimitHeaders === 'all'
      )
        passHeaders = rateLimitHeaders(decision.rateLimit);
    }
    const reportMode = mode === 'monitor' || decision.mode === 'monitor' ? 'monitor' : 'enforce';
    const important = refusing || decision.mode === 'monitor' || decision.monitored !== null;
    this.record(req, info, action, reportMode, decision, outcome, important, span);
    if (span !== undefined) {
      // A span for what an operator looks for (refusals, monitored matches); a plain pass
      // only annotates the request's span: a child span costs 2-4 us, the annotation 0.2.
      if (important)
        recordEvaluation(span, {
          startedMs,
          endedMs: evaluatedMs,
          clientIp: info.clientIp,
          method: req.method,
          decision,
          outcome,
        });
      else annotatePass(span, decision);
    }
    return { info, refusal, passHeaders };
  }

  /** No snapshot, or an error: the fail mode decides (monitor mode never refuses). */
  private failed(
    req: IncomingMessage,
    clientIp: string,
    mode: RampartMode,
    error: boolean,
    span: Span | undefined,
  ): Verdict {
    const info = new RampartInfo(safeIdHeader(req), null, clientIp, mode, NO_TIMINGS);
    const refuse = this.config.failMode === 'closed' && mode === 'enforce';
    if (refuse) this.stats.refused.failedClosed++;
    try {
      this.record(
        req,
        info,
        'unevaluated',
        'enforce',
        null,
        refuse ? 'failed_closed' : 'failed_open',
        error,
        span,
      );
    } catch {
      // reporting must not turn a handled failure into an unhandled one
    }
    return { info, refusal: refuse ? unavailableRefusal(info.requestId) : null, passHeaders: null };
  }

  private off(req: IncomingMessage): Verdict {
    const info = new RampartInfo(
      req.headers['x-request-id'],
      null,
      safeClientIp(req, this.proxies),
      'off',
      NO_TIMINGS,
    );
    return { info, refusal: null, passHeaders: null };
  }

  /** Counts the request and, when important or sampled, queues its event. */
  private record(
    req: IncomingMessage,
    info: RampartRequestInfo,
    action: ReportAction,
    mode: 'enforce' | 'monitor',
    decision: Decision | null,
    outcome: Outcome,
    important: boolean,
    span: Span | undefined,
  ): void {
    if (this.flusher === null || this.flusher.disabled) {
      if (important) this.stats.reports.dropped++;
      return;
    }
    this.queue.count(action, mode, decision?.ruleId ?? null, outcome);
    this.queue.countAddress(info.clientIp);
    const sampled = !important;
    if (sampled && !(this.config.passSampleRate > 0 && Math.random() < this.config.passSampleRate))
      return;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const accepted = this.queue.push({
      requestId: info.requestId,
      time: Date.now(),
      ip: info.clientIp,
      method: req.method ?? '',
      host: reportText(req.headers.host ?? '', REPORT_TEXT_LIMITS.host),
      path: reportText(q === -1 ? url : url.slice(0, q), REPORT_TEXT_LIMITS.path),
      userAgent: reportText(req.headers['user-agent'] ?? '', REPORT_TEXT_LIMITS.userAgent),
      action,
      mode,
      outcome,
      ruleId: decision?.ruleId ?? null,
      category: decision?.category ?? null,
      monitoredRuleId: decision?.monitored?.ruleId ?? null,
      snapshotVersion: decision?.snapshotVersion ?? null,
      sampled,
      traceparent: span === undefined ? null : traceparentOf(span),
    });
    if (accepted) {
      this.stats.reports.queued++;
      // A refusal or a monitored match is what the hub's detectors act on: sent within 250 ms.
      if (important) this.flusher.notifyUrgent();
      this.flusher.notify();
    } else {
      this.stats.reports.dropped++;
    }
  }
}

/** The `X-Request-Id` header, or none when even reading the headers fails (a broken request). */
function safeIdHeader(req: IncomingMessage): string | string[] | undefined {
  try {
    return req.headers['x-request-id'];
  } catch {
    return undefined;
  }
}

function safeClientIp(req: IncomingMessage, proxies: TrustedProxies): string {
  try {
    return resolveClientIp(req, proxies);
  } catch {
    return '';
  }
}

/** The evaluator's view of a node request. */
function requestInfo(req: IncomingMessage, ip: string): RequestInfo {
  let url = req.url ?? '/';
  if (url.charCodeAt(0) !== 47 /* / */) url = originForm(url);
  const q = url.indexOf('?');
  return {
    ip,
    method: req.method ?? 'GET',
    host: req.headers.host ?? '',
    path: q === -1 ? url : url.slice(0, q),
    query: q === -1 ? '' : url.slice(q + 1),
    userAgent: req.headers['user-agent'] ?? '',
    headers: plainHeaders(req.headers),
  };
}

/** `http://host/p?q` (absolute-form, sent to proxies) to `/p?q`; `*` and garbage stay as they are. */
function originForm(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/**
 * Node's request headers as string values. Only `set-cookie` can be an array in a request, and
 * only when a client sends it (they should not); then a copy joins it.
 */
function plainHeaders(
  headers: IncomingMessage['headers'],
): Readonly<Record<string, string | undefined>> {
  if (headers['set-cookie'] === undefined)
    return headers as Readonly<Record<string, string | undefined>>;
  return { ...headers, 'set-cookie': headers['set-cookie'].join(', ') };
}
