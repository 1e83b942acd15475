/**
 * The report batch schema against `parseReportBatch`: batches drawn from the schema are
 * accepted, and on mutated batches the two agree, but for the order of the period.
 */
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReportBatch } from './report-batch.js';
import { reportBatchJsonSchema } from './report-batch.schema.js';

type Schema = Record<string, unknown>;
const schema = reportBatchJsonSchema();
const valid = new Ajv({ allErrors: true, strict: false }).compile(schema);

/** Values valid per `schema` (the subset `report-batch.schema.ts` emits); lists kept short. */
function arbitraryOf(s: Schema): fc.Arbitrary<unknown> {
  const plain = (): fc.Arbitrary<unknown> => {
    if (Array.isArray(s.enum))
      return fc.constantFrom(...(s.enum as unknown[]).filter((v) => v !== null));
    switch (s.type) {
      case 'string': {
        const [min, max] = [s.minLength as number | undefined, s.maxLength as number | undefined];
        const base =
          typeof s.pattern === 'string'
            ? fc.stringMatching(new RegExp(s.pattern))
            : fc.string({
                unit: 'grapheme',
                minLength: min ?? 0,
                maxLength: Math.min(max ?? 20, 20),
              });
        return base.filter(
          (v) => [...v].length >= (min ?? 0) && [...v].length <= (max ?? Infinity),
        );
      }
      case 'integer':
        return fc.integer({
          min: s.minimum as number,
          max: Math.min(s.maximum as number, 2 ** 31),
        });
      case 'number':
        return fc.double({ min: s.minimum as number, max: s.maximum as number, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(arbitraryOf(s.items as Schema), { maxLength: 2 });
      case 'object': {
        const properties = s.properties as Record<string, Schema>;
        return fc.record(
          Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, arbitraryOf(v)])),
          { requiredKeys: s.required as string[] },
        );
      }
      default:
        throw new Error(`no arbitrary for ${JSON.stringify(s)}`);
    }
  };
  return s.nullable ? fc.option(plain(), { nil: null }) : plain();
}

/** What JSON Schema cannot say: the period in order. */
const ordered = (batch: Record<string, unknown>) => {
  const [a, b] = [batch.periodStart as string, batch.periodEnd as string];
  return Date.parse(b) < Date.parse(a) ? { ...batch, periodStart: b, periodEnd: a } : batch;
};
const validBatch = (arbitraryOf(schema) as fc.Arbitrary<Record<string, unknown>>).map(ordered);

describe('report batch JSON Schema', () => {
  it('every batch drawn from the schema is accepted', () => {
    fc.assert(
      fc.property(validBatch, (batch) => {
        expect(valid(batch)).toBe(true);
        const parsed = parseReportBatch(batch);
        expect(parsed.ok ? [] : parsed.issues).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with parseReportBatch on mutated batches', () => {
    const mutated = fc
      .tuple(
        validBatch,
        fc.nat(),
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.constantFrom('', 'x', -1, 1.5, null, '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z'),
        ),
        fc.constantFrom('drop', 'add', 'replace', 'nested'),
      )
      .map(([batch, at, value, how]) => {
        const copy = structuredClone(batch);
        const keys = Object.keys(copy);
        const key = keys[at % keys.length] as string;
        if (how === 'drop') delete copy[key];
        else if (how === 'add') copy.extra = value;
        else if (how === 'replace') copy[key] = value;
        else {
          const inner = copy[key];
          const item = Array.isArray(inner) ? inner[0] : undefined;
          if (item && typeof item === 'object') {
            const fields = Object.keys(item);
            (item as Record<string, unknown>)[fields[at % fields.length] as string] = value;
          } else copy[key] = value;
        }
        return copy;
      });
    fc.assert(
      fc.property(mutated, (batch) => {
        const parsed = parseReportBatch(batch);
        if (parsed.ok) expect(valid(batch)).toBe(true);
        else if (valid(batch)) expect(parsed.issues.map((i) => i.field)).toEqual(['periodEnd']);
      }),
      { numRuns: 2000 },
    );
  });
});
