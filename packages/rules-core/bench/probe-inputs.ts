/**
 * The benchmark's inputs, derived deterministically from the dataset: the random IP sets, a
 * warm-up set, range-start probes for the anchor's defect 1, and the worst-case rule set built
 * around them (see `worst-case-rules.ts` for why rules and probes must miss each other).
 */
import type { ReferenceTable } from './accuracy.ts';
import type { ImportedDatasets } from './dataset-files.ts';
import { generateIpSet, type IpSetSource, rangeStartSet, v4ShareOf } from './ip-sets.ts';
import { indexProbes } from './probe-index.ts';
import {
  BLOCKED_ASNS,
  BLOCKED_COUNTRIES,
  buildWorstCase,
  type WorstCase,
} from './worst-case-rules.ts';

const SEED = 0x5eed_2024;
const WARMUP_SIZE = 2000;
const RANGE_START_PROBES = 1000;
/** Share of IPv6 probes drawn inside announced ranges (the rest: uniform in 2000::/3). */
const V6_ANNOUNCED_SHARE = 0.9;

/** The probe inputs: one IP set per size, a warm-up set, and range-start probes per table. */
export interface Inputs {
  readonly sets: readonly (readonly string[])[];
  readonly warmup: readonly string[];
  readonly rangeStarts: { readonly country: readonly string[]; readonly asn: readonly string[] };
}

export interface References {
  /** Exact lookups over the country entries (labels index them). */
  readonly country: ReferenceTable;
  /** Exact lookups over the ASN entries. */
  readonly asn: ReferenceTable;
}

/**
 * True for addresses the worst-case rule set does not block by country or ASN (an address in
 * several nested ranges is turned down when any of them is blocked).
 */
export function outsideBlockedNetworks(
  data: ImportedDatasets,
  refs: References,
): (ip: string) => boolean {
  const countries = new Set(BLOCKED_COUNTRIES);
  const asns = new Set(BLOCKED_ASNS);
  const blocked = <T>(labels: Uint32Array, entries: readonly T[], test: (e: T) => boolean) =>
    labels.some((label) => test(entries[label] as T));
  return (ip) =>
    !blocked(refs.country.covering(ip), data.country, (e) => countries.has(e.country)) &&
    !blocked(refs.asn.covering(ip), data.asn, (e) => asns.has(e.asn));
}

/**
 * The blocked countries and ASNs that do not occur in the data (`AS`-prefixed for ASNs). On the
 * full data this must be empty, or a rule would have nothing to match.
 */
export function missingBlockedNetworks(data: ImportedDatasets): string[] {
  const countries = new Set(data.country.map((e) => e.country));
  const asns = new Set(data.asn.map((e) => e.asn));
  return [
    ...BLOCKED_COUNTRIES.filter((c) => !countries.has(c)),
    ...BLOCKED_ASNS.filter((a) => !asns.has(a)).map((a) => `AS${a}`),
  ];
}

/** The IP sets (one per size), the warm-up set and the range-start probes. */
export function makeInputs(
  sizes: readonly number[],
  data: ImportedDatasets,
  refs: References,
): Inputs {
  const country = data.country.map((e) => e.range);
  const asn = data.asn.map((e) => e.range);
  const all = [...country, ...asn];
  const source: IpSetSource = {
    v4Share: v4ShareOf(all),
    v6Ranges: all.filter((r) => r.family === 6),
    v6AnnouncedShare: V6_ANNOUNCED_SHARE,
  };
  const accept = outsideBlockedNetworks(data, refs);
  return {
    sets: sizes.map((size, i) => generateIpSet(size, SEED + i + 1, source, accept)),
    warmup: generateIpSet(WARMUP_SIZE, SEED, source, accept),
    rangeStarts: {
      country: rangeStartSet(RANGE_START_PROBES, SEED + 101, country),
      asn: rangeStartSet(RANGE_START_PROBES, SEED + 102, asn),
    },
  };
}

/** The worst-case rule set, built around every probe address. */
export function makeWorstCase(inputs: Inputs): WorstCase {
  return buildWorstCase({
    probes: indexProbes([...inputs.warmup, ...inputs.sets.flat()]),
    seed: SEED + 7,
  });
}
