/**
 * A trace as the dashboard shows it, made from Jaeger's query API answer (`GET
 * /api/traces/{id}`): its spans in start order with their service, name, offset from the
 * trace's start and duration, and their parent, so the page can draw the waterfall.
 */

/** The part of Jaeger's HTTP JSON API answer this reads (its UI's own API). */
export interface JaegerTraceJson {
  readonly traceID: string;
  readonly spans: readonly {
    readonly spanID: string;
    readonly operationName: string;
    readonly references?: readonly { refType: string; spanID: string; traceID: string }[];
    /** Microseconds since the epoch. */
    readonly startTime: number;
    /** Microseconds. */
    readonly duration: number;
    readonly tags?: readonly { key: string; value: unknown }[];
    readonly processID: string;
  }[];
  readonly processes: Readonly<Record<string, { readonly serviceName: string }>>;
}

export interface TraceSpanView {
  readonly spanId: string;
  /** The span it is a child of within this trace; null for the root (or an orphan). */
  readonly parentSpanId: string | null;
  readonly service: string;
  readonly name: string;
  /** From the trace's first span start, ms. */
  readonly startMs: number;
  readonly durationMs: number;
  readonly error: boolean;
  /** A few attributes worth a glance (WAF decision, HTTP route and status). */
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

export interface TraceView {
  readonly traceId: string;
  readonly startTime: string;
  readonly durationMs: number;
  readonly spans: readonly TraceSpanView[];
  /** Where a person opens the trace in Jaeger's UI; null when no UI address is configured. */
  readonly jaegerUrl: string | null;
}

/** Attributes the view keeps (others stay in Jaeger). */
const SHOWN = [
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'url.path',
  'client.address',
  'rampart.waf.action',
  'rampart.waf.outcome',
  'rampart.waf.rule_id',
  'rampart.waf.category',
  'rampart.snapshot.version',
  'rampart.report.events',
  'messaging.destination.name',
];

export function traceView(json: JaegerTraceJson, uiUrl: string | null): TraceView {
  const start = json.spans.reduce((at, s) => Math.min(at, s.startTime), Number.POSITIVE_INFINITY);
  const end = json.spans.reduce((at, s) => Math.max(at, s.startTime + s.duration), start);
  const ids = new Set(json.spans.map((s) => s.spanID));
  const spans = [...json.spans]
    .sort((a, b) => a.startTime - b.startTime || a.spanID.localeCompare(b.spanID))
    .map((span): TraceSpanView => {
      const parent = span.references?.find(
        (r) => r.refType === 'CHILD_OF' && r.traceID === json.traceID && ids.has(r.spanID),
      );
      const attributes: Record<string, string | number | boolean> = {};
      let error = false;
      for (const tag of span.tags ?? []) {
        if (tag.key === 'error' && tag.value === true) error = true;
        if (tag.key === 'otel.status_code' && tag.value === 'ERROR') error = true;
        const value = tag.value;
        if (
          SHOWN.includes(tag.key) &&
          (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        )
          attributes[tag.key] = value;
      }
      return {
        spanId: span.spanID,
        parentSpanId: parent?.spanID ?? null,
        service: json.processes[span.processID]?.serviceName ?? 'unknown',
        name: span.operationName,
        startMs: (span.startTime - start) / 1000,
        durationMs: span.duration / 1000,
        error,
        attributes,
      };
    });
  return {
    traceId: json.traceID,
    startTime: json.spans.length === 0 ? '' : new Date(start / 1000).toISOString(),
    durationMs: json.spans.length === 0 ? 0 : (end - start) / 1000,
    spans,
    jaegerUrl: uiUrl === null ? null : `${uiUrl.replace(/\/$/, '')}/trace/${json.traceID}`,
  };
}
