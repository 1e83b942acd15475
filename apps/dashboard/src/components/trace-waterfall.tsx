/**
 * One trace as a waterfall: each span on a row, indented under its parent, with its service,
 * name, duration and a bar placed on the trace's timeline. The bars are SVG rectangles whose
 * position is an attribute, not an inline style, which the dashboard's CSP forbids.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, sitePath } from '../api/hub-api.ts';
import type { Trace, TraceSpan } from '../api/hub-types.ts';

/** Spans in tree order (parents before children, siblings by start), with their depth. */
export function spanRows(spans: readonly TraceSpan[]): { span: TraceSpan; depth: number }[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | null, TraceSpan[]>();
  for (const span of spans) {
    const parent =
      span.parentSpanId !== null && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const rows: { span: TraceSpan; depth: number }[] = [];
  const walk = (parent: string | null, depth: number) => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => a.startMs - b.startMs);
    for (const span of list) {
      rows.push({ span, depth });
      walk(span.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return rows;
}

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

export function TraceWaterfall({ siteId, traceId }: { siteId: string; traceId: string }) {
  const [trace, setTrace] = useState<Trace>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    setTrace(undefined);
    setError(undefined);
    api<Trace>('GET', sitePath(siteId, `/traces/${traceId}`)).then(
      (t) => live && setTrace(t),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [siteId, traceId]);

  if (error) return <p class="field-error">{error}</p>;
  if (trace === undefined) return <p class="loading">Loading the trace…</p>;
  const total = Math.max(trace.durationMs, 0.001);
  return (
    <section class="trace" aria-label={`Trace ${trace.traceId}`}>
      <p class="note">
        Trace <code>{trace.traceId}</code>: {trace.spans.length} spans, {ms(trace.durationMs)} ms
        {trace.jaegerUrl && (
          <>
            {' · '}
            <a href={trace.jaegerUrl} target="_blank" rel="noopener noreferrer">
              Open in Jaeger
            </a>
          </>
        )}
      </p>
      <table class="spans">
        <thead>
          <tr>
            <th scope="col">Span</th>
            <th scope="col">Service</th>
            <th scope="col">Duration</th>
            <th scope="col">Timeline</th>
          </tr>
        </thead>
        <tbody>
          {spanRows(trace.spans).map(({ span, depth }) => (
            <tr key={span.spanId} class={span.error ? 'error' : undefined}>
              <td class={`depth-${Math.min(depth, 8)}`} title={attributeText(span)}>
                {span.name}
              </td>
              <td>{span.service}</td>
              <td>{ms(span.durationMs)} ms</td>
              <td class="bar">
                <svg viewBox="0 0 1000 10" preserveAspectRatio="none" role="img" aria-hidden="true">
                  <rect
                    x={Math.round((span.startMs / total) * 1000)}
                    width={Math.max(2, Math.round((span.durationMs / total) * 1000))}
                    y="1"
                    height="8"
                  />
                </svg>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function attributeText(span: TraceSpan): string {
  return Object.entries(span.attributes)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join('\n');
}
