/**
 * One request through prexy: target and host checked, route and rule set chosen, the request
 * streamed to the route's upstream through its pool, and the response streamed back, its body
 * substituted on the way when the body plan says so.
 *
 * - The upstream comes from the configuration only (see `request-target.ts`): an unknown host is
 *   answered 421 without contacting anything.
 * - Backpressure end to end: the upstream's body is read only as fast as the client (through
 *   the decoder, engine and encoder) takes it; a slow reader pauses the upstream read, so
 *   nothing is buffered without bound.
 * - A client that goes away aborts the upstream request; an upstream that fails before the
 *   response began is answered 502 or 504 (counted); one that fails mid-body ends the client's
 *   connection without completing the response, so no client mistakes a cut body for a whole.
 * - The response keeps the route table, rule set and bitmap decision it started with, whatever
 *   configuration is swapped in meanwhile.
 * - When it is done, its stages become spans under the request's span and histogram samples
 *   (`telemetry/`), and its access log line is written in the request's trace context.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline, Transform, type TransformCallback, type Writable } from 'node:stream';
import { context } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { assetKey, type MatchBitmapCache } from '../bitmap/match-bitmap.js';
import { type BodyPlan, planBody, substitutedHeaders } from '../body/body-plan.js';
import { decoder, encoder, upstreamAcceptEncoding } from '../body/content-coding.js';
import { DirectBody } from '../body/direct-body.js';
import { SlicedSubstituter, SlicedSubstitution } from '../body/sliced-substitution.js';
import { type RouteTable, ruleSetFor, type SiteRoute } from '../routing/route-table.js';
import type { CachedRuleSet, CompiledSets } from '../rules/compiled-sets.js';
import type { ProxyMetrics } from '../telemetry/proxy-metrics.js';
import { recordStages, tracedRequest } from '../telemetry/proxy-spans.js';
import { acceptsTrailers, StageTimings } from '../timing/stage-timings.js';
import {
  appendFieldValue,
  downstreamResponseHeaders,
  upstreamRequestHeaders,
} from './forwarded-headers.js';
import { countUpstreamError, type ProxyCounters } from './proxy-counters.js';
import { pathOf, requestTarget } from './request-target.js';
import { type UpstreamPools, upstreamFailure } from './upstream-pools.js';

/** What the access log records of one request. */
export interface AccessLogLine {
  readonly time: string;
  readonly site: string | null;
  readonly method: string;
  readonly host: string;
  readonly target: string;
  readonly status: number;
  readonly bytesOut: number;
  readonly substituted: boolean;
  /** `all`, `narrowed` or `skipped`: how many of the rule set's rules ran (bitmap cache). */
  readonly rules?: 'all' | 'narrowed' | 'skipped';
  readonly matches?: number;
  readonly bufferLimitHit?: boolean;
  readonly error?: string;
  readonly timings: Record<string, number>;
}

/**
 * Decides, before proxying, whether the site's WAF lets the request through. Calls `next` when
 * it does; otherwise it has answered the request itself (403, 429) and the upstream is never
 * contacted. See `edge-waf.ts`.
 */
export type EdgeGuard = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export interface ProxyDeps {
  /** The route table in force (read once per request). */
  readonly table: () => RouteTable;
  readonly sets: CompiledSets;
  readonly pools: UpstreamPools;
  /** The per-asset rule bitmap; undefined turns it off. */
  readonly bitmap: MatchBitmapCache | undefined;
  readonly counters: ProxyCounters;
  /** Stage histograms (and the counters' instruments); undefined in tests that need none. */
  readonly metrics?: ProxyMetrics;
  readonly log: ((line: AccessLogLine) => void) | undefined;
  readonly warn: (message: string) => void;
  /** The edge WAF of a site whose configuration switches it on. */
  readonly edgeGuard?: (site: string) => EdgeGuard | undefined;
}

export function createProxyHandler(
  deps: ProxyDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    deps.counters.requests++;
    const timings = new StageTimings();
    const method = req.method ?? 'GET';
    const target = requestTarget(method, req.url ?? '', req.headers.host);
    if (target.kind === 'options-asterisk') {
      answer(res, 204, '', { allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' });
      return;
    }
    if (target.kind === 'refuse') {
      deps.counters.refused++;
      answer(res, target.status, `${target.reason}\n`);
      return;
    }
    const route = deps.table().route(target.host);
    if (route === undefined) {
      deps.counters.refused++;
      answer(res, 421, `prexy serves no site at ${target.host}\n`);
      return;
    }
    const proxy = () => forward(deps, req, res, route, target.host, target.path, timings);
    const guard = route.edgeWaf ? deps.edgeGuard?.(route.site) : undefined;
    if (guard === undefined) proxy();
    else guard(req, res, proxy);
  };
}

function forward(
  deps: ProxyDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: SiteRoute,
  host: string,
  path: string,
  timings: StageTimings,
): void {
  const { counters } = deps;
  /** The request's context (its server span): the stage spans and the log line go under it. */
  const requestContext = context.active();
  const traced = tracedRequest(requestContext);
  const method = req.method ?? 'GET';
  const lookupStart = performance.now();
  const rules = ruleSetFor(route, pathOf(path));
  timings.rulesMs = performance.now() - lookupStart;

  const upstream = new URL(route.route.upstream);
  const headers = upstreamRequestHeaders(
    req.headers,
    {
      address: req.socket.remoteAddress ?? '',
      host,
      proto: 'encrypted' in req.socket ? 'https' : 'http',
    },
    route.route.preserveHost ? host : upstream.host,
  );
  // Node has answered `Expect: 100-continue` already; the upstream gets the body at once.
  delete headers.expect;
  const acceptEncoding = upstreamAcceptEncoding(req.headers['accept-encoding']);
  if (acceptEncoding === undefined) delete headers['accept-encoding'];
  else headers['accept-encoding'] = acceptEncoding;

  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

  let controller: Dispatcher.DispatchController | undefined;
  let clientGone = false;
  /** Prexy cut the response itself (the upstream or the body failed): no client abort. */
  let cut = false;
  let settled = false;
  let bytesIn = 0;
  let bytesOut = 0;
  let logged: Partial<AccessLogLine> = {};
  let status = 0;
  /** Where upstream body bytes go: the response itself, or the first stage of the pipeline. */
  let sink: Writable = res;
  /** Or, for a substituted body whose coding stays identity, the direct writer. */
  let direct: DirectBody | undefined;
  /** What to do just before the body written straight to `res` ends (the timing trailer). */
  let atEnd: (() => void) | undefined;
  let substitution: SlicedSubstituter | undefined;
  /** The rule set that ran (for the substitution span). */
  let ruleSetId = '';

  const finish = (error?: string) => {
    if (settled) return;
    settled = true;
    const endedAt = performance.now();
    counters.bytesOut += bytesOut;
    const stats = substitution?.stats;
    if (stats !== undefined) {
      const matches = stats.rules.reduce((n, r) => n + r.matches, 0);
      counters.matches += matches;
      logged = { ...logged, matches, bufferLimitHit: stats.bufferLimitHit };
    }
    const failure = error ?? logged.error;
    if (traced !== undefined)
      recordStages(traced, {
        timings,
        endedAt,
        error: failure,
        substitution:
          logged.substituted === true
            ? {
                rules: logged.rules ?? 'all',
                ruleSet: ruleSetId,
                matches: logged.matches ?? 0,
                bytesIn,
                bytesOut,
                bufferLimitHit: logged.bufferLimitHit ?? false,
              }
            : undefined,
      });
    deps.metrics?.recordStages(timings, endedAt - timings.start, logged.substituted === true);
    if (deps.log === undefined) return;
    const line: AccessLogLine = {
      time: new Date().toISOString(),
      site: route.site,
      method,
      host,
      target: path,
      status,
      bytesOut,
      substituted: false,
      ...logged,
      ...(error === undefined ? {} : { error }),
      timings: timings.toJSON(),
    };
    const log = deps.log;
    context.with(requestContext, () => log(line));
  };

  res.on('close', () => {
    if (res.writableFinished) {
      finish();
      return;
    }
    if (cut) {
      finish(logged.error);
      return;
    }
    clientGone = true;
    counters.clientAborts++;
    controller?.abort(new Error('the client went away'));
    finish(logged.error ?? 'client_gone');
  });

  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      timings.markWritten();
      if (clientGone) c.abort(new Error('the client went away'));
    },
    onResponseStart(c, statusCode, upstreamHeaders, statusMessage) {
      timings.markHeaders();
      status = statusCode;
      const plan: BodyPlan = planBody({
        method,
        requestHeaders: req.headers,
        status: statusCode,
        responseHeaders: upstreamHeaders,
        hasRules: rules !== undefined,
        contentTypes: route.route.contentTypes,
      });
      let out: OutgoingHttpHeaders = downstreamResponseHeaders(upstreamHeaders);
      if (plan.substitute && rules !== undefined) {
        out = substitutedHeaders(out, plan, route.route.keepLastModified);
        const chosen = chooseRules(deps, rules, host, path, upstreamHeaders, timings);
        logged = { substituted: true, rules: chosen.kind };
        ruleSetId = chosen.set?.id ?? rules.id;
        const trailers = acceptsTrailers(req.headers.te);
        if (trailers) out.trailer = 'Server-Timing';
        out['server-timing'] = appendFieldValue(upstreamHeaders['server-timing'], timings.header());
        res.writeHead(statusCode, statusMessage, out);
        counters.substituted++;
        const done = (error: Error | undefined) => {
          if (substitution) {
            const stats = substitution.stats;
            if (stats.bufferLimitHit) counters.bufferLimitHits++;
            if (error === undefined && chosen.kind === 'all' && chosen.key !== undefined) {
              if (!stats.bufferLimitHit)
                deps.bitmap?.remember(chosen.key, rules.id, stats.matchedRules);
            }
          }
          if (error !== undefined) {
            if (!clientGone) cut = true;
            logged = { ...logged, error: error.message };
            c.abort(error);
          }
        };
        const countBytes = (n: number) => {
          bytesOut += n;
        };
        if (chosen.set !== undefined && plan.from === 'identity' && plan.to === 'identity') {
          const sliced = new SlicedSubstituter(
            chosen.set.set,
            route.route.maxBufferedBytes,
            deps.warn,
          );
          substitution = sliced;
          direct = new DirectBody(res, sliced, c, {
            bytes: countBytes,
            beforeEnd: () => {
              timings.substitutionMs = sliced.substitutionMs;
              if (trailers) res.addTrailers({ 'server-timing': timings.trailer() });
            },
            done,
          });
        } else if (chosen.set === undefined && plan.from === plan.to) {
          // No rule to run, no coding to change (an asset no rule matched): the bytes go
          // straight to the client, with the substituted headers and the trailer it asked for.
          if (trailers) atEnd = () => res.addTrailers({ 'server-timing': timings.trailer() });
        } else {
          sink = substitutionPipeline(deps, res, plan, chosen.set, route, timings, trailers, {
            created: (s) => {
              substitution = s;
            },
            bytes: countBytes,
            done,
          });
        }
      } else {
        out['server-timing'] = appendFieldValue(upstreamHeaders['server-timing'], timings.header());
        res.writeHead(statusCode, statusMessage, out);
      }
    },
    onResponseData(c, chunk) {
      counters.bytesIn += chunk.length;
      bytesIn += chunk.length;
      if (direct !== undefined) {
        direct.write(chunk);
        return;
      }
      if (sink === res) bytesOut += chunk.length;
      if (!sink.write(chunk)) {
        c.pause();
        sink.once('drain', () => c.resume());
      }
    },
    onResponseEnd() {
      if (direct !== undefined) {
        direct.end();
        return;
      }
      atEnd?.();
      sink.end();
    },
    onResponseError(_c, error) {
      if (clientGone) return;
      if (!res.headersSent) {
        const failure = upstreamFailure(error);
        countUpstreamError(counters, failure.kind);
        status = failure.status;
        logged = { error: `${failure.kind}: ${error.message}` };
        answer(
          res,
          failure.status,
          failure.status === 504 ? 'upstream timed out\n' : 'bad gateway\n',
        );
        return;
      }
      // Mid-body: the response cannot be completed; end the connection so it is seen as cut.
      countUpstreamError(counters, 'body_aborted');
      logged = { ...logged, error: `body_aborted: ${error.message}` };
      cut = true;
      if (sink === res) res.destroy(error);
      else sink.destroy(error);
    },
  };

  timings.markDispatched();
  deps.pools.get(upstream.origin).dispatch(
    {
      path,
      method: method as Dispatcher.HttpMethod,
      headers,
      body: hasBody ? req : null,
    },
    handler,
  );
}

/**
 * The rules to run on this body: all of them, or (for a remembered asset, see the bitmap cache)
 * only those that matched before, or none.
 */
function chooseRules(
  deps: ProxyDeps,
  rules: CachedRuleSet,
  host: string,
  path: string,
  headers: Parameters<typeof assetKey>[2],
  timings: StageTimings,
): {
  kind: 'all' | 'narrowed' | 'skipped';
  set: CachedRuleSet | undefined;
  key: string | undefined;
} {
  const start = performance.now();
  const key = deps.bitmap === undefined ? undefined : assetKey(host, path, headers);
  const matched = key === undefined ? undefined : deps.bitmap?.lookup(key, rules.id);
  let chosen: {
    kind: 'all' | 'narrowed' | 'skipped';
    set: CachedRuleSet | undefined;
    key: string | undefined;
  };
  if (matched === undefined) chosen = { kind: 'all', set: rules, key };
  else if (matched.length === 0) {
    deps.counters.bitmapSkippedAll++;
    chosen = { kind: 'skipped', set: undefined, key };
  } else {
    deps.counters.bitmapNarrowed++;
    chosen = { kind: 'narrowed', set: deps.sets.narrowed(rules, matched), key };
  }
  timings.rulesMs += performance.now() - start;
  return chosen;
}

interface PipelineEvents {
  readonly created: (substitution: SlicedSubstituter) => void;
  readonly bytes: (n: number) => void;
  readonly done: (error: Error | undefined) => void;
}

/**
 * decode -> substitute -> encode -> response, as one stream pipeline; returns the stage the
 * upstream's bytes are written to. With no rules to run (an asset no rule ever matched), the
 * body is only decoded and encoded again when the codings differ, never scanned.
 */
function substitutionPipeline(
  deps: ProxyDeps,
  res: ServerResponse,
  plan: Extract<BodyPlan, { substitute: true }>,
  rules: CachedRuleSet | undefined,
  route: SiteRoute,
  timings: StageTimings,
  trailers: boolean,
  events: PipelineEvents,
): Writable {
  const stages: (Transform | ServerResponse)[] = [];
  const recode = plan.from !== plan.to || rules !== undefined;
  const decode = recode ? decoder(plan.from) : undefined;
  if (decode) stages.push(decode);
  if (rules !== undefined) {
    const substitution = new SlicedSubstitution(rules.set, route.route.maxBufferedBytes, deps.warn);
    events.created(substitution.substituter);
    stages.push(substitution);
  }
  const encode = recode ? encoder(plan.to) : undefined;
  if (encode) stages.push(encode);
  stages.push(
    new Tail(
      (n) => events.bytes(n),
      () => {
        const substitution = stages.find(
          (s): s is SlicedSubstitution => s instanceof SlicedSubstitution,
        );
        timings.substitutionMs = substitution?.substituter.substitutionMs ?? 0;
        if (trailers) res.addTrailers({ 'server-timing': timings.trailer() });
      },
    ),
  );
  stages.push(res);
  const [first] = stages;
  pipeline(stages as unknown as [Transform, ...Writable[]], (error) => {
    events.done(error ?? undefined);
  });
  return first as Writable;
}

/** The last stage before the socket: counts bytes and sets the trailers once the body is done. */
class Tail extends Transform {
  constructor(
    private readonly count: (n: number) => void,
    private readonly atEnd: () => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.count(chunk.length);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.atEnd();
    done();
  }
}

/** A short answer of prexy's own (never from an upstream). */
export function answer(
  res: ServerResponse,
  status: number,
  body: string,
  headers: OutgoingHttpHeaders = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}
