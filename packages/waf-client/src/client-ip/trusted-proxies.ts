/**
 * The set of trusted proxy addresses, for deciding whose `X-Forwarded-For` to believe.
 *
 * Built once from CIDRs (parsed by rules-core, so `::ffff:10.0.0.0/104` is the IPv4 block and
 * IPv4-mapped peers match IPv4 entries); a lookup parses the address into a scratch buffer and
 * compares numbers, allocating nothing.
 */
import { parseIpInto } from '@rampart/rules-core/ip/address';
import { parseIpRange } from '@rampart/rules-core/ip/range';

interface V6Range {
  readonly start: Uint32Array;
  readonly end: Uint32Array;
}

export class TrustedProxies {
  private readonly v4: { start: number; end: number }[] = [];
  private readonly v6: V6Range[] = [];
  private readonly scratch = new Uint32Array(4);

  /** @param cidrs validated by the configuration (addresses, CIDRs or start-end ranges) */
  constructor(cidrs: readonly string[]) {
    for (const text of cidrs) {
      for (const range of parseIpRange(text)) {
        if (range.family === 4)
          this.v4.push({ start: Number(range.start), end: Number(range.end) });
        else this.v6.push({ start: words(range.start), end: words(range.end) });
      }
    }
  }

  /** True when no proxy is trusted (forwarded headers are then never read). */
  get empty(): boolean {
    return this.v4.length === 0 && this.v6.length === 0;
  }

  /**
   * The family of `address` (4 or 6; IPv4-mapped IPv6 is 4) when it parses, else 0; `trusted`
   * tells whether it lies in a trusted range. Split in two so the caller parses once.
   */
  classify(address: string): { family: 0 | 4 | 6; trusted: boolean } {
    const family = parseIpInto(address, this.scratch);
    if (family === 4) return family4(this.containsV4(this.scratch[0] as number));
    if (family === 6) return family6(this.containsV6(this.scratch));
    return UNPARSED;
  }

  /**
   * Whether an address already parsed by `parseIpInto` (its `family` and words) is trusted: for
   * callers that need the parsed words anyway, so the address is parsed once.
   */
  containsParsed(family: 4 | 6, words: Uint32Array): boolean {
    return family === 4 ? this.containsV4(words[0] as number) : this.containsV6(words);
  }

  private containsV4(value: number): boolean {
    for (const r of this.v4) if (value >= r.start && value <= r.end) return true;
    return false;
  }

  private containsV6(address: Uint32Array): boolean {
    for (const r of this.v6)
      if (compare(address, r.start) >= 0 && compare(address, r.end) <= 0) return true;
    return false;
  }
}

const UNPARSED = Object.freeze({ family: 0 as const, trusted: false });
const V4_TRUSTED = Object.freeze({ family: 4 as const, trusted: true });
const V4_UNTRUSTED = Object.freeze({ family: 4 as const, trusted: false });
const V6_TRUSTED = Object.freeze({ family: 6 as const, trusted: true });
const V6_UNTRUSTED = Object.freeze({ family: 6 as const, trusted: false });
const family4 = (trusted: boolean) => (trusted ? V4_TRUSTED : V4_UNTRUSTED);
const family6 = (trusted: boolean) => (trusted ? V6_TRUSTED : V6_UNTRUSTED);

function words(value: bigint): Uint32Array {
  const out = new Uint32Array(4);
  for (let i = 3; i >= 0; i--) {
    out[i] = Number(value & 0xffffffffn);
    value >>= 32n;
  }
  return out;
}

function compare(a: Uint32Array, b: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return 0;
}
