/**
 * Reads traces from Jaeger's query API (`HUB_JAEGER_QUERY_URL`, e.g. `http://127.0.0.1:16686`)
 * for the dashboard's event view. The hub only reads: its own spans reach Jaeger through the
 * OpenTelemetry exporter like every app's.
 */
import { Inject, Injectable } from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import type { JaegerTraceJson } from './trace-view.js';

const QUERY_TIMEOUT_MS = 5000;

export type TraceLookup =
  | { readonly found: true; readonly trace: JaegerTraceJson }
  | { readonly found: false; readonly reason: 'not_configured' | 'not_found' };

/** Jaeger answered neither the trace nor "not found" (down, refusing, a 5xx). */
export class JaegerUnavailableError extends Error {}

@Injectable()
export class JaegerQueryService {
  constructor(@Inject(HUB_CONFIG) private readonly config: HubConfig) {}

  /** Whether a Jaeger is configured at all. */
  get configured(): boolean {
    return this.config.jaegerQueryUrl !== null;
  }

  /** Where a person opens traces (the UI), or null. */
  get uiUrl(): string | null {
    return this.config.jaegerUiUrl ?? this.config.jaegerQueryUrl;
  }

  async trace(traceId: string): Promise<TraceLookup> {
    const base = this.config.jaegerQueryUrl;
    if (base === null) return { found: false, reason: 'not_configured' };
    let response: Response;
    try {
      response = await fetch(`${base.replace(/\/$/, '')}/api/traces/${traceId}`, {
        signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (error) {
      throw new JaegerUnavailableError(`Jaeger did not answer: ${(error as Error).message}`);
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return { found: false, reason: 'not_found' };
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new JaegerUnavailableError(`Jaeger answered ${response.status}`);
    }
    const body = (await response.json()) as { data?: JaegerTraceJson[] };
    const trace = body.data?.[0];
    return trace === undefined || trace.spans.length === 0
      ? { found: false, reason: 'not_found' }
      : { found: true, trace };
  }
}
