/**
 * The shapes of the hub's answers the dashboard reads (the hub's OpenAPI document at
 * `/docs/openapi.json` is their reference). Rules are rules-core's own model.
 */
import type { Rule } from '@rampart/rules-core/rules/model';

export type { Rule };

export interface Site {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly rulesRevision: number;
  readonly builtRevision: number;
  readonly currentVersion: number | null;
}

export interface SiteKey {
  readonly keyId: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** A new site key: shown once. */
export interface IssuedKey {
  readonly keyId: string;
  readonly key: string;
}

export interface CreatedSite {
  readonly site: Site;
  readonly credentials: IssuedKey;
}

export interface Session {
  readonly csrfToken: string;
  readonly expiresAt: string;
}

export interface RuleList {
  readonly revision: number;
  readonly rules: readonly Rule[];
}

export type TrafficClass =
  | 'allowed'
  | 'passed'
  | 'blocked'
  | 'rate_limited'
  | 'monitored'
  | 'unevaluated';

export type TrafficMinute = { readonly minute: string } & Readonly<Record<TrafficClass, number>>;

export interface Traffic {
  readonly from: string;
  readonly to: string;
  readonly minutes: readonly TrafficMinute[];
}

export interface TopEntry {
  readonly value: string;
  readonly count: number;
}

export type Dimension = 'ip' | 'country' | 'asn' | 'path' | 'rule' | 'user_agent';

export interface ReportEvent {
  readonly time: string;
  readonly requestId: string;
  readonly instance: string;
  readonly ip: string;
  readonly country: string | null;
  readonly asn: number | null;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly userAgent: string;
  readonly action: string;
  readonly mode: string;
  readonly outcome: string;
  readonly ruleId: string | null;
  readonly monitoredRuleId: string | null;
  readonly snapshotVersion: number | null;
  /** The request's trace (32 hex) when the app traced it. */
  readonly traceId: string | null;
}

/** `GET /v1/sites/{id}/traces/{traceId}`: a trace as Jaeger holds it. */
export interface TraceSpan {
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly service: string;
  readonly name: string;
  readonly startMs: number;
  readonly durationMs: number;
  readonly error: boolean;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

export interface Trace {
  readonly traceId: string;
  readonly startTime: string;
  readonly durationMs: number;
  readonly spans: readonly TraceSpan[];
  readonly jaegerUrl: string | null;
}

export type BlockSubject =
  | { readonly kind: 'ip'; readonly addresses: readonly string[] }
  | { readonly kind: 'asn'; readonly asn: number }
  | { readonly kind: 'country'; readonly country: string }
  | { readonly kind: 'header'; readonly name: string; readonly value: string };

export interface AutomaticBlock {
  readonly id: string;
  readonly ruleId: string;
  readonly detector: string;
  readonly subject: BlockSubject;
  readonly mode: 'enforce' | 'monitor';
  readonly action: 'block' | 'rate_limit';
  readonly status: string;
  readonly evidence: {
    readonly count: number;
    readonly threshold: number;
    readonly windowSeconds: number;
    readonly sampleRequestIds: readonly string[];
    readonly [more: string]: unknown;
  };
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
  readonly allowedBy: readonly string[];
}

export interface Instance {
  readonly instanceId: string;
  readonly snapshotVersion: number | null;
  readonly userAgent: string | null;
  readonly lastSeen: string;
}

export interface Build {
  readonly id: string;
  readonly status: 'running' | 'succeeded' | 'failed';
  readonly rulesRevision: number;
  readonly version: number | null;
  readonly error: string | null;
  readonly hubInstance: string;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

export interface SnapshotVersion {
  readonly version: number;
  readonly sha256: string;
  readonly bytes: number;
  readonly rulesRevision: number;
  readonly createdAt: string;
}
