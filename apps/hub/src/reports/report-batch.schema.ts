/**
 * The JSON Schema of a report batch (`POST /v1/reports`), built from the constants
 * `parseReportBatch` reads (its choices, limits and patterns), for the OpenAPI document.
 * `report-batch.schema.test.ts` holds the two to each other: what one accepts, the other does,
 * except that `periodEnd` must not be before `periodStart`, which JSON Schema cannot say.
 */
import {
  ACTIONS,
  BATCH_ID,
  CATEGORIES,
  HEX_256,
  ISO_TIME,
  LIMITS,
  MODES,
  OUTCOMES,
  SIGNAL_KINDS,
  TRACEPARENT,
} from './report-batch.js';

type Schema = Record<string, unknown>;

const text = (min: number, max: number, pattern?: RegExp): Schema => ({
  type: 'string',
  minLength: min,
  maxLength: max,
  ...(pattern ? { pattern: pattern.source } : {}),
});
const nullable = (schema: Schema): Schema => ({
  ...schema,
  nullable: true,
  ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
});
const choice = (values: readonly string[]): Schema => ({ type: 'string', enum: [...values] });
const count: Schema = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const version: Schema = nullable({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const time: Schema = { type: 'string', pattern: ISO_TIME.source };
const object = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((name) => !optional.includes(name)),
  additionalProperties: false,
});
const list = (items: Schema, max: number): Schema => ({ type: 'array', items, maxItems: max });

const T = LIMITS.text;

export function reportBatchJsonSchema(): Schema {
  return {
    ...object(
      {
        version: { type: 'integer', enum: [1] },
        batchId: { ...text(8, 64, BATCH_ID), description: 'Kept across retries: counted once.' },
        instance: text(1, T.id),
        snapshotVersion: version,
        periodStart: time,
        periodEnd: { ...time, description: 'Not before periodStart.' },
        passSampleRate: { type: 'number', minimum: 0, maximum: 1 },
        dropped: count,
        counts: list(
          object({
            action: choice(ACTIONS),
            mode: choice(MODES),
            ruleId: nullable(text(1, T.id)),
            outcome: choice(OUTCOMES),
            count,
          }),
          LIMITS.counts,
        ),
        events: list(
          object(
            {
              requestId: text(1, T.id),
              time,
              ip: text(0, T.ip),
              method: text(1, T.method),
              host: text(0, T.host),
              path: text(0, T.path),
              userAgent: text(0, T.userAgent),
              action: choice(ACTIONS),
              mode: choice(MODES),
              outcome: choice(OUTCOMES),
              ruleId: nullable(text(1, T.id)),
              category: nullable(choice(CATEGORIES)),
              monitoredRuleId: nullable(text(1, T.id)),
              snapshotVersion: version,
              sampled: { type: 'boolean' },
              traceparent: nullable(text(55, 55, TRACEPARENT)),
            },
            ['traceparent'],
          ),
          LIMITS.events,
        ),
        signals: list(
          object({
            kind: choice(SIGNAL_KINDS),
            requestId: text(1, T.id),
            time,
            ip: text(0, T.ip),
            path: text(0, T.path),
            userAgent: text(0, T.userAgent),
            account: nullable(text(64, 64, HEX_256)),
          }),
          LIMITS.signals,
        ),
        rateLimitKeys: list(
          object({ ruleId: text(1, T.id), key: text(1, T.key), count }),
          LIMITS.rateLimitKeys,
        ),
        addressCounts: list(object({ ip: text(1, T.ip), count }), LIMITS.addressCounts),
      },
      ['signals', 'rateLimitKeys', 'addressCounts'],
    ),
    description: 'A report batch, version 1 (waf-client README, "Reports").',
  };
}
