/**
 * Rampart's rule model: the JSON an operator writes (RULES.json, the hub's API) and the snapshot
 * stores. `validate.ts` turns untrusted JSON into these types or explains, rule by rule and field
 * by field, why it cannot.
 *
 * Every rule has an `id`, an `action`, a `mode` (`enforce` acts; `monitor` only reports what it
 * would have done, so a rule can be rolled out safely), an optional `expiresAt` (temporary blocks
 * published by attack detection expire on their own) and an optional `note`.
 */

export type RuleMode = 'enforce' | 'monitor';

/** What a matching allow/block rule asks for. Rate limits have their own rule type. */
export type RuleAction = 'allow' | 'block';

interface RuleBase {
  /** Unique within a rule set; 1-128 characters of [A-Za-z0-9_.:-]. Reported with decisions. */
  readonly id: string;
  readonly mode: RuleMode;
  /** ISO 8601 instant after which the rule no longer applies. */
  readonly expiresAt?: string;
  readonly note?: string;
}

/** Allow or block clients by address, CIDR or start-end range (IPv4 and IPv6). */
export interface IpRule extends RuleBase {
  readonly type: 'ip';
  readonly action: RuleAction;
  /** Each entry: `1.2.3.4`, `10.0.0.0/8`, `2001:db8::/32` or `1.2.3.4-1.2.3.9`. */
  readonly ranges: readonly string[];
}

/** Allow or block clients whose address geolocates to one of the ISO 3166-1 alpha-2 codes. */
export interface CountryRule extends RuleBase {
  readonly type: 'country';
  readonly action: RuleAction;
  readonly countries: readonly string[];
}

/** Allow or block clients whose address is announced by one of the autonomous systems. */
export interface AsnRule extends RuleBase {
  readonly type: 'asn';
  readonly action: RuleAction;
  readonly asns: readonly number[];
}

/** Block (or allow) clients listed in one of the named reputation lists of the snapshot. */
export interface ReputationRule extends RuleBase {
  readonly type: 'reputation';
  readonly action: RuleAction;
  readonly lists: readonly string[];
}

/** The request attribute a pattern looks at. */
export type PatternField = 'path' | 'query' | 'user_agent' | 'host' | 'method' | 'header';

/**
 * How a pattern compares. `exact` and `prefix` are case-sensitive except on `host` and `method`
 * (which are case-insensitive by nature); `contains` is always case-insensitive (the anchor's
 * substring rules were case-sensitive by accident, WAF-SPEC defect 8); `regex` uses the engine
 * registered through `rules/regex-extension.ts`, with its own `i` flag.
 */
export type PatternMatch = 'exact' | 'prefix' | 'contains' | 'regex';

export interface Pattern {
  readonly field: PatternField;
  /** Header name for `field: 'header'`; query parameter name for `field: 'query'` (optional). */
  readonly name?: string;
  readonly match: PatternMatch;
  readonly value: string;
  /** Regex flags (`i`), only with `match: 'regex'`. */
  readonly flags?: string;
}

/** Allow or block requests matching every pattern listed (an AND of conditions). */
export interface PatternRule extends RuleBase {
  readonly type: 'pattern';
  readonly action: RuleAction;
  readonly when: readonly Pattern[];
}

/** Which requests share a rate-limit counter. */
export type RateLimitKey =
  | { readonly kind: 'ip' }
  | { readonly kind: 'ip_path' }
  | { readonly kind: 'header'; readonly name: string };

/**
 * Limits matching requests to `limit` per `windowSeconds` per key; the client answers 429 with
 * `Retry-After` and `RateLimit`/`RateLimit-Policy` headers beyond it.
 */
export interface RateLimitRule extends RuleBase {
  readonly type: 'rate_limit';
  /** Conditions a request must meet to count (AND); empty means every request. */
  readonly when: readonly Pattern[];
  /** Upper-case methods that count; empty or absent means all. */
  readonly methods?: readonly string[];
  readonly key: RateLimitKey;
  readonly windowSeconds: number;
  readonly limit: number;
  /**
   * Only requests from these addresses count (entries as for ip rules); absent means every
   * address. What an automatic rate limit of one attacker uses.
   */
  readonly ranges?: readonly string[];
}

export type Rule = IpRule | CountryRule | AsnRule | ReputationRule | PatternRule | RateLimitRule;
export type RuleType = Rule['type'];

/** The document form of a rule set: what RULES.json holds and the hub exports. */
export interface RuleSet {
  readonly rules: readonly Rule[];
}
