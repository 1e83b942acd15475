/**
 * The hub's tables as Kysely sees them. Portable across SQLite and PostgreSQL on purpose:
 * timestamps are ISO 8601 text, identifiers text, JSON text; nothing dialect-specific.
 */
import type { Generated } from 'kysely';

export interface SitesTable {
  id: string;
  name: string;
  created_at: string;
  /** Bumped by every change of the site's rules or of any dataset: what a build must catch up to. */
  rules_revision: number;
  /** The revision the newest published snapshot was built from. */
  built_revision: number;
  /** The newest revision whose build failed (not retried until the revision moves on). */
  failed_revision: number;
  /**
   * Hex key of HMAC-SHA256 for account identifiers in signals (written into the snapshots, so
   * clients hash accounts before they report them); null until the site's first build.
   */
  signal_key: string | null;
}

export interface SiteKeysTable {
  /** The public part of the key, in its first segment; used to find the row. */
  id: string;
  site_id: string;
  /** SHA-256 of the whole key (keys are 256-bit random, so a fast hash is enough). */
  secret_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface RulesTable {
  site_id: string;
  rule_id: string;
  position: number;
  /** The validated rule as JSON. */
  body: string;
  updated_at: string;
}

export type DatasetKind = 'country' | 'asn' | 'reputation';

export interface DatasetsTable {
  id: string;
  kind: DatasetKind;
  name: string;
  sha256: string;
  bytes: number;
  entries: number;
  lines: number;
  skipped_lines: number;
  created_at: string;
}

export interface SnapshotsTable {
  site_id: string;
  version: number;
  sha256: string;
  bytes: number;
  rules_revision: number;
  created_at: string;
}

export type BuildStatus = 'running' | 'succeeded' | 'failed';

export interface BuildsTable {
  id: string;
  site_id: string;
  status: BuildStatus;
  rules_revision: number;
  version: number | null;
  error: string | null;
  hub_instance: string;
  started_at: string;
  finished_at: string | null;
}

export interface InstancesTable {
  site_id: string;
  instance_id: string;
  snapshot_version: number | null;
  user_agent: string | null;
  last_seen: string;
}

export interface ReportBatchesTable {
  site_id: string;
  /** Chosen by the client and kept across its retries: a batch is counted once. */
  batch_id: string;
  instance: string;
  events: number;
  received_at: string;
}

/** Exact request counts per minute (`minute`: `2026-12-01T12:34`), from the batches' counts. */
export interface TrafficMinutesTable {
  site_id: string;
  minute: string;
  action: string;
  mode: string;
  /** `''` for requests no rule decided. */
  rule_id: string;
  outcome: string;
  count: number;
}

/**
 * Requests per minute by one dimension of the events (`ip`, `country`, `asn`, `path`, `rule`,
 * `user_agent`) and outcome. Blocked, rate-limited and monitored requests are all events, so
 * those counts are exact; passed ones are a sample, counted with the weight of its rate.
 */
export interface TrafficTopTable {
  site_id: string;
  minute: string;
  dimension: string;
  value: string;
  outcome: string;
  count: number;
}

/** A bounded sample of raw events (retention by age and count: `reports/report-retention.ts`). */
export interface ReportEventsTable {
  site_id: string;
  time: string;
  request_id: string;
  batch_id: string;
  instance: string;
  ip: string;
  country: string | null;
  asn: number | null;
  method: string;
  host: string;
  path: string;
  user_agent: string;
  action: string;
  mode: string;
  outcome: string;
  rule_id: string | null;
  category: string | null;
  monitored_rule_id: string | null;
  snapshot_version: number | null;
  /** 1 when the event is a sample of passed requests. */
  sampled: number;
  /** The request's trace id (32 hex) when the app traced it, else null. */
  trace_id: string | null;
}

export interface SignalMinutesTable {
  site_id: string;
  minute: string;
  kind: string;
  count: number;
}

export interface DetectionSettingsTable {
  site_id: string;
  /** The site's whole settings document (every detector), JSON. */
  body: string;
  updated_at: string;
}

export interface AutomaticBlocksTable {
  id: string;
  site_id: string;
  detector: string;
  /** What is blocked (JSON `BlockSubject`: addresses, an AS, a country, a header value). */
  subject: string;
  mode: 'enforce' | 'monitor';
  action: 'block' | 'rate_limit';
  /** Counts, window and sample request ids, JSON. */
  evidence: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** The allow rule that kept the detector from blocking (never built into a snapshot). */
  allowed_by: string | null;
  /** 1 once a build after the expiry dropped it from the snapshot. */
  expiry_built: number;
}

export interface ProxyConfigsTable {
  site_id: string;
  /** The site's prexy configuration as `parseProxyConfig` normalised it, JSON. */
  body: string;
  updated_at: string;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the session cookie's token. */
  token_hash: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export interface MigrationsTable {
  name: string;
  applied_at: string;
  id: Generated<number>;
}

export interface HubSchema {
  sites: SitesTable;
  site_keys: SiteKeysTable;
  rules: RulesTable;
  datasets: DatasetsTable;
  snapshots: SnapshotsTable;
  builds: BuildsTable;
  instances: InstancesTable;
  report_batches: ReportBatchesTable;
  traffic_minutes: TrafficMinutesTable;
  traffic_top: TrafficTopTable;
  report_events: ReportEventsTable;
  signal_minutes: SignalMinutesTable;
  detection_settings: DetectionSettingsTable;
  sessions: SessionsTable;
  automatic_blocks: AutomaticBlocksTable;
  proxy_configs: ProxyConfigsTable;
}
