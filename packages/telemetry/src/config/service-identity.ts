/**
 * Who this process is, for the defaults of its telemetry: the `package.json` nearest to the
 * program Node was asked to run (`process.argv[1]`). Its `name` and `version` become
 * `service.name` and `service.version`; its `rampart.metricsPort` (if any) the default port of
 * the Prometheus endpoint.
 *
 * Found on disk rather than passed in because the telemetry is loaded with `node --import`,
 * before the app's own code, and so has no other way to ask the app.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AppDefaults } from './telemetry-settings.js';

/** The port of the Prometheus endpoint when neither the app nor the environment names one. */
export const DEFAULT_METRICS_PORT = 9464;

const UNKNOWN: AppDefaults = {
  packageName: 'unknown_service:node',
  version: '0.0.0',
  metricsPort: DEFAULT_METRICS_PORT,
};

/** The defaults of the app whose entry point is `script` (unknown when there is none). */
export function appDefaults(script: string | undefined): AppDefaults {
  if (script === undefined) return UNKNOWN;
  let dir = dirname(resolve(script));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return fromManifest(readFileSync(manifest, 'utf8'));
    const parent = dirname(dir);
    if (parent === dir) return UNKNOWN;
    dir = parent;
  }
}

/** The defaults a `package.json` text gives (unknown fields fall back). */
export function fromManifest(text: string): AppDefaults {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return UNKNOWN;
  }
  if (typeof manifest !== 'object' || manifest === null) return UNKNOWN;
  const { name, version, rampart } = manifest as Record<string, unknown>;
  const port =
    typeof rampart === 'object' && rampart !== null
      ? (rampart as Record<string, unknown>).metricsPort
      : undefined;
  return {
    packageName: typeof name === 'string' && name !== '' ? name : UNKNOWN.packageName,
    version: typeof version === 'string' && version !== '' ? version : UNKNOWN.version,
    metricsPort:
      typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536
        ? port
        : DEFAULT_METRICS_PORT,
  };
}
