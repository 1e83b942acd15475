/**
 * The rule set and probe request for Rampart's worst-case evaluation.
 *
 * "Worst case" means every category is consulted and nothing decides early: the probe address is
 * looked up in the allow list, the block list, the country, ASN and reputation tables, and the
 * request is then compared with every pattern rule, before the evaluator answers `pass`. To make
 * that true for every probe, rules and probes are made to miss each other: the blocked countries
 * and ASNs are a fixed, realistic list (sanctioned countries, hosting providers) and the probe
 * generator rejects addresses that geolocate to them; block and reputation ranges are drawn at
 * random but redrawn while they contain a probe. Pattern rules use realistic attack signatures
 * that the (benign) probe request does not contain.
 */
import type { ReputationList } from '@rampart/rules-core/datasets/dataset';
import type { RequestInfo } from '@rampart/rules-core/evaluator/request';
import {
  formatIpv4,
  formatIpv6,
  type Ipv6Address,
  ipFromBigInt,
} from '@rampart/rules-core/ip/address';
import type { IpRange } from '@rampart/rules-core/ip/range';
import type { Pattern } from '@rampart/rules-core/rules/model';
import { addressInRange, below, mulberry32, type Uint32Source } from './ip-sets.ts';
import type { ProbeIndex } from './probe-index.ts';

/** The request shape of `Evaluator.evaluate`. */
export type ProbeRequest = RequestInfo;

const PROBE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-language': 'en-US,en;q=0.9,de;q=0.8',
  'accept-encoding': 'gzip, deflate, br',
  referer: 'https://shop.example.com/products?category=garden',
  cookie: 'session=3f9a1c0e7b2d4e6f8a0b1c2d3e4f5a6b; theme=dark',
});

/** A benign browser request from `ip` that none of the worst-case pattern rules matches. */
export function probeRequest(ip: string): ProbeRequest {
  return {
    ip,
    method: 'GET',
    host: 'shop.example.com',
    path: '/products/1234/reviews',
    query: 'page=2&sort=newest&utm_source=newsletter',
    userAgent:
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    headers: PROBE_HEADERS,
  };
}

/** 20 pattern rules over every pattern field and every non-regex match kind. */
const PATTERN_RULES: readonly (readonly Pattern[])[] = [
  [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
  [{ field: 'path', match: 'prefix', value: '/phpmyadmin' }],
  [{ field: 'path', match: 'exact', value: '/.env' }],
  [{ field: 'path', match: 'exact', value: '/xmlrpc.php' }],
  [{ field: 'path', match: 'contains', value: '/.git/' }],
  [{ field: 'query', match: 'contains', value: 'union select' }],
  [{ field: 'query', match: 'contains', value: '<script' }],
  [{ field: 'query', name: 'redirect', match: 'prefix', value: 'http://' }],
  [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
  [{ field: 'user_agent', match: 'contains', value: 'nikto' }],
  [{ field: 'user_agent', match: 'contains', value: 'python-requests' }],
  [{ field: 'user_agent', match: 'prefix', value: 'curl/' }],
  [{ field: 'host', match: 'exact', value: 'admin.example.com' }],
  [{ field: 'host', match: 'contains', value: 'staging' }],
  [{ field: 'method', match: 'exact', value: 'TRACE' }],
  [{ field: 'header', name: 'x-forwarded-host', match: 'contains', value: 'evil' }],
  [{ field: 'header', name: 'referer', match: 'contains', value: 'casino' }],
  [{ field: 'header', name: 'accept', match: 'exact', value: 'application/x-evil' }],
  [
    { field: 'method', match: 'exact', value: 'POST' },
    { field: 'path', match: 'prefix', value: '/login' },
  ],
  [
    { field: 'path', match: 'prefix', value: '/api/' },
    { field: 'header', name: 'cookie', match: 'contains', value: 'PHPSESSID=deadbeef' },
  ],
];

/** Address space random rule ranges are drawn from: announced-looking, never special-purpose. */
const V4_SPACE: IpRange = { family: 4, start: 0x01000000n, end: 0xdfffffffn };
const V6_SPACE: IpRange = { family: 6, start: 0x2001n << 112n, end: (0x2c00n << 112n) - 1n };

/** A random CIDR of `family` with a prefix length in [minPrefix, maxPrefix]. */
function randomCidr(
  next: Uint32Source,
  family: 4 | 6,
  minPrefix: number,
  maxPrefix: number,
): IpRange {
  const bits = family === 4 ? 32 : 128;
  const prefix = minPrefix + below(next, maxPrefix - minPrefix + 1);
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  const start = addressInRange(next, family === 4 ? V4_SPACE : V6_SPACE) & ~hostMask;
  return { family, start, end: start | hostMask };
}

/** Draws ranges until `count` of them contain no probe. */
function rangesAvoiding(
  next: Uint32Source,
  probes: ProbeIndex,
  count: number,
  draw: (next: Uint32Source) => IpRange,
): IpRange[] {
  const out: IpRange[] = [];
  for (let attempts = 0; out.length < count; attempts++) {
    if (attempts > count * 100) throw new Error('could not draw ranges that avoid every probe');
    const range = draw(next);
    if (!probes.containsAny(range)) out.push(range);
  }
  return out;
}

/** Text of a range as a rule writes it: CIDR when aligned, else `start-end`. */
export function rangeText(range: IpRange): string {
  const size = range.end - range.start + 1n;
  const bits = range.family === 4 ? 32 : 128;
  const hostBits = size.toString(2).length - 1;
  const aligned = size === 1n << BigInt(hostBits) && (range.start & (size - 1n)) === 0n;
  const start = addressText(range.family, range.start);
  if (aligned) return `${start}/${bits - hostBits}`;
  return `${start}-${addressText(range.family, range.end)}`;
}

function addressText(family: 4 | 6, value: bigint): string {
  if (family === 4) return formatIpv4(Number(value));
  return formatIpv6((ipFromBigInt(6, value) as Ipv6Address).words);
}

/** Turns every third CIDR into a start-end range and every tenth into a single address. */
function mixShapes(next: Uint32Source, cidrs: readonly IpRange[]): IpRange[] {
  return cidrs.map((range, i) => {
    if (i % 10 === 9) return { ...range, end: range.start };
    if (i % 3 === 2) {
      const span = range.end - range.start;
      const cap = span < 0xffffn ? Number(span) : 0xffff;
      return { ...range, end: range.start + BigInt(below(next, cap + 1)) };
    }
    return range;
  });
}

export interface WorstCaseInput {
  /** Every probe address; none may lie in a {@link BLOCKED_COUNTRIES} or {@link BLOCKED_ASNS} range. */
  readonly probes: ProbeIndex;
  readonly seed: number;
}

export interface WorstCase {
  /** The rule-set document, to pass through `parseRuleSet`. */
  readonly ruleSetJson: { readonly rules: readonly Record<string, unknown>[] };
  readonly reputation: readonly ReputationList[];
}

export const REPUTATION_LIST = 'bench-bad-actors';

/** Countries of the country block rule: a typical sanctions-driven geoblock. */
export const BLOCKED_COUNTRIES: readonly string[] = [
  'KP',
  'IR',
  'SY',
  'CU',
  'SD',
  'BY',
  'VE',
  'MM',
  'AF',
  'IQ',
];

/**
 * ASNs of the ASN block rule: large hosting and cloud networks, where most bot traffic of a
 * credential-stuffing run comes from (Amazon, DigitalOcean, Hetzner, OVH, Linode, Vultr,
 * Microsoft, Google Cloud, Alibaba, Tencent).
 */
export const BLOCKED_ASNS: readonly number[] = [
  16509, 14061, 24940, 16276, 63949, 20473, 8075, 396982, 45102, 132203,
];

/** Builds the worst-case rule set and its reputation list (deterministic for a seed). */
export function buildWorstCase(input: WorstCaseInput): WorstCase {
  const next = mulberry32(input.seed);
  const { probes } = input;
  const v4 = (min: number, max: number) => (n: Uint32Source) => randomCidr(n, 4, min, max);
  const v6 = (min: number, max: number) => (n: Uint32Source) => randomCidr(n, 6, min, max);
  const allow = [
    ...rangesAvoiding(next, probes, 4, v4(24, 32)),
    ...rangesAvoiding(next, probes, 2, v6(48, 64)),
  ];
  const block = mixShapes(next, [
    ...rangesAvoiding(next, probes, 200, v4(20, 32)),
    ...rangesAvoiding(next, probes, 100, v6(32, 64)),
  ]);
  const reputation = [
    ...rangesAvoiding(next, probes, 800, v4(20, 32)),
    ...rangesAvoiding(next, probes, 200, v6(32, 64)),
  ];
  const rules: Record<string, unknown>[] = [
    {
      id: 'allow-office',
      type: 'ip',
      action: 'allow',
      ranges: allow.map(rangeText),
      note: 'office and CI runners',
    },
    { id: 'block-abusers', type: 'ip', action: 'block', ranges: block.map(rangeText) },
    {
      id: 'block-countries',
      type: 'country',
      action: 'block',
      countries: BLOCKED_COUNTRIES,
    },
    { id: 'block-hosting-asns', type: 'asn', action: 'block', asns: BLOCKED_ASNS },
    { id: 'block-reputation', type: 'reputation', action: 'block', lists: [REPUTATION_LIST] },
    ...PATTERN_RULES.map((when, i) => ({
      id: `pattern-${i + 1}`,
      type: 'pattern',
      action: 'block',
      when,
    })),
  ];
  return { ruleSetJson: { rules }, reputation: [{ name: REPUTATION_LIST, ranges: reputation }] };
}
