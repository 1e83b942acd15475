/** The messages between the hub and a snapshot-build worker thread. */
import { DatasetKind } from '../database/schema.js';

export interface BuildInput {
  /** Validated rule JSON, in order. */
  readonly rules: readonly unknown[];
  readonly datasets: readonly { kind: DatasetKind; name: string; path: string; sha256: string }[];
  readonly version: number;
  readonly outPath: string;
  /** The site's HMAC key for account identifiers in signals. */
  readonly signalKey: string;
  /** The site's prexy configuration (validated by the hub), for the snapshot's `proxy_config`. */
  readonly proxyConfig?: unknown;
}

export interface BuildOutput {
  readonly sha256: string;
  readonly bytes: number;
  readonly rangeCount: number;
}

export type BuildMessage = { ok: true; output: BuildOutput } | { ok: false; error: string };
