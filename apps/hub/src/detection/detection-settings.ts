/**
 * A site's detector settings: what each detector watches, when it fires, and what it publishes.
 *
 * One declarative description ({@link DETECTORS}) is the single source of truth: the validator
 * ({@link parseDetectionSettings}) and the JSON Schema in the OpenAPI document
 * ({@link detectionSettingsSchema}) are both read off it, so they cannot drift apart.
 *
 * Every detector has `enabled`, `mode` (`enforce` publishes rules that refuse; `monitor`
 * publishes them in monitor mode, so matches are only reported), `action` and `blockSeconds`
 * (how long the automatic rule lives). The detectors (README "Detection"):
 * - `failedLoginsPerIp`: `threshold` failed logins from one address within `windowSeconds`.
 * - `failedLoginsPerAccount`: `threshold` failed logins for one account from at least
 *   `minAddresses` addresses within the window (distributed stuffing): blocks those addresses.
 * - `failedLoginSurge`: the site's failed logins within `windowSeconds` reach `minFailures`, from
 *   at least `minAddresses` addresses, and `factor` times what such a window usually holds
 *   (the average over `baselineSeconds`): while that lasts, every address with `perAddress`
 *   failures in the window is blocked (stuffing spread thin over many addresses).
 * - `failedLoginShareAsn` / `failedLoginShareCountry`: of at least `minAttempts` logins from one
 *   AS (country) within the window, a `share` or more failed: blocks the AS (country).
 * - `requestRateIp` / `requestRateAsn`: more than `threshold` requests within the window.
 * - `badUserAgents`: `threshold` requests whose user agent contains one of `patterns`
 *   (case-insensitive) from one address within the window.
 * - `fleetRateLimits`: a rate-limit rule's key over its fleet-wide `limit`, summed over every
 *   instance's reports: blocked for `blockSeconds`, or the rule's own window when null.
 */

export const DETECTOR_NAMES = [
  'failedLoginsPerIp',
  'failedLoginsPerAccount',
  'failedLoginSurge',
  'failedLoginShareAsn',
  'failedLoginShareCountry',
  'requestRateIp',
  'requestRateAsn',
  'badUserAgents',
  'fleetRateLimits',
] as const;
export type DetectorName = (typeof DETECTOR_NAMES)[number];

export type DetectorMode = 'enforce' | 'monitor';
/** `rate_limit` publishes a rate-limit rule for the address instead of a block. */
export type DetectorAction = 'block' | 'rate_limit';

interface Common {
  readonly enabled: boolean;
  readonly mode: DetectorMode;
  readonly action: DetectorAction;
}

export interface WindowedSettings extends Common {
  readonly threshold: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
}

export interface AccountSettings extends WindowedSettings {
  readonly minAddresses: number;
}

export interface SurgeSettings extends Common {
  readonly minFailures: number;
  readonly minAddresses: number;
  readonly factor: number;
  readonly baselineSeconds: number;
  readonly perAddress: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
}

export interface ShareSettings extends Common {
  readonly minAttempts: number;
  readonly share: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
}

export interface UserAgentSettings extends WindowedSettings {
  readonly patterns: readonly string[];
}

export interface FleetRateLimitSettings extends Common {
  readonly blockSeconds: number | null;
}

export interface DetectionSettings {
  readonly failedLoginsPerIp: WindowedSettings;
  readonly failedLoginsPerAccount: AccountSettings;
  readonly failedLoginSurge: SurgeSettings;
  readonly failedLoginShareAsn: ShareSettings;
  readonly failedLoginShareCountry: ShareSettings;
  readonly requestRateIp: WindowedSettings;
  readonly requestRateAsn: WindowedSettings;
  readonly badUserAgents: UserAgentSettings;
  readonly fleetRateLimits: FleetRateLimitSettings;
}

/** What one field of a detector may hold. */
type FieldSpec =
  | { readonly kind: 'boolean'; readonly description: string }
  | {
      readonly kind: 'enum';
      readonly values: readonly string[];
      readonly description: string;
    }
  | {
      readonly kind: 'integer';
      readonly min: number;
      readonly max: number;
      readonly nullable?: boolean;
      readonly description: string;
    }
  | {
      readonly kind: 'number';
      readonly min: number;
      readonly max: number;
      readonly description: string;
    }
  | {
      readonly kind: 'strings';
      readonly maxItems: number;
      readonly maxLength: number;
      readonly description: string;
    };

interface DetectorSpec {
  readonly description: string;
  /** Actions this detector can publish (networks are only ever blocked). */
  readonly actions: readonly DetectorAction[];
  readonly fields: Readonly<Record<string, FieldSpec>>;
}

const DAY = 86_400;
const common = (actions: readonly DetectorAction[]): Record<string, FieldSpec> => ({
  enabled: { kind: 'boolean', description: 'Whether the detector runs.' },
  mode: {
    kind: 'enum',
    values: ['enforce', 'monitor'],
    description: 'enforce: its rules refuse requests; monitor: they only report matches.',
  },
  action: {
    kind: 'enum',
    values: actions,
    description:
      actions.length > 1
        ? 'block: refuse every request of the address; rate_limit: rate-limit it instead.'
        : 'What the rule does (networks are only ever blocked).',
  },
});
const windowSeconds: FieldSpec = {
  kind: 'integer',
  min: 1,
  max: DAY,
  description: 'The sliding window counted over, in seconds.',
};
const blockSeconds: FieldSpec = {
  kind: 'integer',
  min: 1,
  max: 30 * DAY,
  description: 'How long the automatic rule lives, in seconds.',
};
const threshold = (what: string): FieldSpec => ({
  kind: 'integer',
  min: 1,
  max: 1_000_000_000,
  description: `${what} within the window that fire the detector.`,
});
const ADDRESS_ACTIONS: readonly DetectorAction[] = ['block', 'rate_limit'];
const NETWORK_ACTIONS: readonly DetectorAction[] = ['block'];
const shareFields = (of: string): Record<string, FieldSpec> => ({
  ...common(NETWORK_ACTIONS),
  minAttempts: {
    kind: 'integer',
    min: 1,
    max: 1_000_000_000,
    description: `Logins from one ${of} within the window before its share is judged.`,
  },
  share: {
    kind: 'number',
    min: 0.01,
    max: 1,
    description: 'The share of those logins that failed (0.01-1) that fires the detector.',
  },
  windowSeconds,
  blockSeconds,
});

/** Every detector and its fields: the validator and the JSON Schema are read off this. */
export const DETECTORS: Readonly<Record<DetectorName, DetectorSpec>> = {
  failedLoginsPerIp: {
    description: 'Failed logins from one address.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      threshold: threshold('Failed logins'),
      windowSeconds,
      blockSeconds,
    },
  },
  failedLoginsPerAccount: {
    description: 'Failed logins for one account from many addresses; blocks those addresses.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      threshold: threshold('Failed logins for the account'),
      minAddresses: {
        kind: 'integer',
        min: 1,
        max: 1000,
        description: 'Distinct addresses those failures must come from.',
      },
      windowSeconds,
      blockSeconds,
    },
  },
  failedLoginSurge: {
    description:
      'A surge of failed logins across the site, far above its usual rate; blocks the addresses that failed repeatedly during it.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      minFailures: threshold('Failed logins across the site'),
      minAddresses: {
        kind: 'integer',
        min: 1,
        max: 1000,
        description: 'Distinct addresses those failures must come from.',
      },
      factor: {
        kind: 'number',
        min: 1,
        max: 1000,
        description:
          'How many times the usual number of failed logins in such a window (from the baseline) the window must hold.',
      },
      baselineSeconds: {
        kind: 'integer',
        min: 60,
        max: 30 * DAY,
        description: 'The period the usual rate of failed logins is averaged over, in seconds.',
      },
      perAddress: {
        kind: 'integer',
        min: 1,
        max: 1_000_000,
        description: 'Failed logins within the window that get an address blocked during a surge.',
      },
      windowSeconds,
      blockSeconds,
    },
  },
  failedLoginShareAsn: {
    description: 'The share of failed logins from one autonomous system; blocks the AS.',
    actions: NETWORK_ACTIONS,
    fields: shareFields('AS'),
  },
  failedLoginShareCountry: {
    description: 'The share of failed logins from one country; blocks the country.',
    actions: NETWORK_ACTIONS,
    fields: shareFields('country'),
  },
  requestRateIp: {
    description: 'Requests from one address.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      threshold: threshold('Requests'),
      windowSeconds,
      blockSeconds,
    },
  },
  requestRateAsn: {
    description: 'Requests from one autonomous system; blocks the AS.',
    actions: NETWORK_ACTIONS,
    fields: {
      ...common(NETWORK_ACTIONS),
      threshold: threshold('Requests'),
      windowSeconds,
      blockSeconds,
    },
  },
  badUserAgents: {
    description: 'Requests with a known-bad user agent from one address.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      threshold: threshold('Such requests'),
      windowSeconds,
      blockSeconds,
      patterns: {
        kind: 'strings',
        maxItems: 200,
        maxLength: 200,
        description: 'Case-insensitive substrings of user agents that are known to be tools.',
      },
    },
  },
  fleetRateLimits: {
    description:
      'A rate-limit key over its rule’s fleet-wide limit, summed over every instance’s reports.',
    actions: ADDRESS_ACTIONS,
    fields: {
      ...common(ADDRESS_ACTIONS),
      blockSeconds: {
        ...blockSeconds,
        nullable: true,
        description: 'How long the key is blocked, in seconds; null: the rule’s own window.',
      },
    },
  },
};

/** The defaults: what a site without settings runs (README "Detection" explains the choice). */
export const DEFAULT_DETECTION_SETTINGS: DetectionSettings = {
  failedLoginsPerIp: {
    enabled: true,
    mode: 'enforce',
    action: 'block',
    threshold: 5,
    windowSeconds: 300,
    blockSeconds: 3600,
  },
  failedLoginsPerAccount: {
    enabled: true,
    mode: 'enforce',
    action: 'block',
    threshold: 10,
    minAddresses: 3,
    windowSeconds: 600,
    blockSeconds: 3600,
  },
  failedLoginSurge: {
    enabled: true,
    mode: 'enforce',
    action: 'block',
    minFailures: 10,
    minAddresses: 5,
    factor: 5,
    baselineSeconds: DAY,
    perAddress: 2,
    windowSeconds: 60,
    blockSeconds: 900,
  },
  failedLoginShareAsn: {
    enabled: true,
    mode: 'monitor',
    action: 'block',
    minAttempts: 50,
    share: 0.9,
    windowSeconds: 600,
    blockSeconds: 3600,
  },
  failedLoginShareCountry: {
    enabled: true,
    mode: 'monitor',
    action: 'block',
    minAttempts: 200,
    share: 0.95,
    windowSeconds: 600,
    blockSeconds: 3600,
  },
  requestRateIp: {
    enabled: true,
    mode: 'enforce',
    action: 'block',
    threshold: 3000,
    windowSeconds: 60,
    blockSeconds: 600,
  },
  requestRateAsn: {
    enabled: true,
    mode: 'monitor',
    action: 'block',
    threshold: 30_000,
    windowSeconds: 60,
    blockSeconds: 600,
  },
  badUserAgents: {
    enabled: true,
    mode: 'enforce',
    action: 'block',
    threshold: 1,
    windowSeconds: 60,
    blockSeconds: 3600,
    patterns: [
      'sqlmap',
      'nikto',
      'nmap',
      'masscan',
      'zgrab',
      'nuclei',
      'dirbuster',
      'gobuster',
      'wpscan',
      'acunetix',
      'havij',
      'hydra',
    ],
  },
  fleetRateLimits: { enabled: true, mode: 'enforce', action: 'block', blockSeconds: null },
};

export interface SettingsIssue {
  /** The field, as a path: `failedLoginsPerIp.threshold`. */
  readonly field: string;
  readonly reason: string;
}

export type ParsedSettings =
  | { readonly ok: true; readonly settings: DetectionSettings }
  | { readonly ok: false; readonly issues: readonly SettingsIssue[] };

/**
 * Checks a settings document. Detectors left out keep `base` (the site's current settings, or
 * the defaults), and so do fields left out of a detector: a PUT of `{"failedLoginsPerIp":
 * {"threshold": 8}}` changes that one number. Unknown detectors or fields are refused.
 */
export function parseDetectionSettings(
  raw: unknown,
  base: DetectionSettings = DEFAULT_DETECTION_SETTINGS,
): ParsedSettings {
  if (!isObject(raw))
    return { ok: false, issues: [{ field: '(body)', reason: 'must be a JSON object' }] };
  const issues: SettingsIssue[] = [];
  const out: Record<string, Record<string, unknown>> = {};
  for (const key of Object.keys(raw))
    if (!(DETECTOR_NAMES as readonly string[]).includes(key))
      issues.push({
        field: key,
        reason: `is not a detector (one of ${DETECTOR_NAMES.join(', ')})`,
      });
  for (const name of DETECTOR_NAMES) {
    const spec = DETECTORS[name];
    const given = raw[name];
    const merged: Record<string, unknown> = { ...base[name] };
    if (given !== undefined) {
      if (!isObject(given)) {
        issues.push({ field: name, reason: 'must be an object' });
        continue;
      }
      for (const [field, value] of Object.entries(given)) {
        const fieldSpec = spec.fields[field];
        if (!fieldSpec) {
          issues.push({
            field: `${name}.${field}`,
            reason: `is not a setting of this detector (one of ${Object.keys(spec.fields).join(', ')})`,
          });
          continue;
        }
        const reason = checkField(fieldSpec, value);
        if (reason) issues.push({ field: `${name}.${field}`, reason });
        else merged[field] = value;
      }
    }
    out[name] = merged;
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, settings: out as unknown as DetectionSettings };
}

/** Why `value` does not fit `spec`, or null when it does. */
function checkField(spec: FieldSpec, value: unknown): string | null {
  switch (spec.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value)
        ? null
        : `must be one of ${spec.values.join(', ')}`;
    case 'integer':
      if (value === null && spec.nullable) return null;
      return Number.isSafeInteger(value) &&
        (value as number) >= spec.min &&
        (value as number) <= spec.max
        ? null
        : `must be a whole number from ${spec.min} to ${spec.max}${spec.nullable ? ', or null' : ''}`;
    case 'number':
      return typeof value === 'number' &&
        Number.isFinite(value) &&
        value >= spec.min &&
        value <= spec.max
        ? null
        : `must be a number from ${spec.min} to ${spec.max}`;
    case 'strings': {
      const ok =
        Array.isArray(value) &&
        value.length <= spec.maxItems &&
        value.every((v) => typeof v === 'string' && v.length >= 1 && v.length <= spec.maxLength);
      return ok
        ? null
        : `must be an array of at most ${spec.maxItems} strings of 1 to ${spec.maxLength} characters`;
    }
  }
}

type JsonSchema = Record<string, unknown>;

function fieldSchema(spec: FieldSpec): JsonSchema {
  const description = spec.description;
  switch (spec.kind) {
    case 'boolean':
      return { type: 'boolean', description };
    case 'enum':
      return { type: 'string', enum: [...spec.values], description };
    case 'integer':
      return {
        type: 'integer',
        ...(spec.nullable ? { nullable: true } : {}),
        minimum: spec.min,
        maximum: spec.max,
        description,
      };
    case 'number':
      return { type: 'number', minimum: spec.min, maximum: spec.max, description };
    case 'strings':
      return {
        type: 'array',
        maxItems: spec.maxItems,
        items: { type: 'string', minLength: 1, maxLength: spec.maxLength },
        description,
      };
  }
}

/**
 * The JSON Schema (the subset OpenAPI 3.0 shares: `nullable`, not type arrays) of a settings
 * document (`full`: every detector and field present, as the hub
 * answers; otherwise any subset, as a PUT may send).
 */
export function detectionSettingsSchema(full: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of DETECTOR_NAMES) {
    const spec = DETECTORS[name];
    const fields = Object.fromEntries(
      Object.entries(spec.fields).map(([field, f]) => [field, fieldSchema(f)]),
    );
    properties[name] = {
      type: 'object',
      description: spec.description,
      additionalProperties: false,
      properties: fields,
      ...(full ? { required: Object.keys(spec.fields) } : {}),
    };
  }
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    ...(full ? { required: [...DETECTOR_NAMES] } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
