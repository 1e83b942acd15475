/**
 * What the evaluator answers for a request.
 *
 * A decision always names the snapshot version it came from, so a reported decision can be
 * traced to the exact rules that made it.
 */
import type { RuleMode } from '../rules/model.js';
import type { RangeCategory } from '../snapshot/schema.js';

export type DecisionAction = 'allow' | 'block' | 'rate_limit' | 'pass';

/** Which kind of rule decided: a range category, a request pattern or a rate limit. */
export type DecisionCategory = RangeCategory | 'pattern' | 'rate_limit';

export interface RuleMatch {
  readonly action: Exclude<DecisionAction, 'pass'>;
  readonly ruleId: string;
  readonly category: DecisionCategory;
}

export interface RateLimitInfo {
  readonly ruleId: string;
  readonly limit: number;
  readonly remaining: number;
  readonly windowSeconds: number;
  /** Seconds until the window resets (for `Retry-After` and `RateLimit`). */
  readonly resetSeconds: number;
}

export interface Decision {
  /**
   * What to do. When `mode` is `monitor`, the deciding rule is in monitor mode: the caller lets
   * the request through and reports what would have happened.
   */
  readonly action: DecisionAction;
  readonly mode: RuleMode;
  /** The deciding rule; null for `pass`. */
  readonly ruleId: string | null;
  readonly category: DecisionCategory | null;
  readonly snapshotVersion: number;
  /** The first monitor-mode rule that matched but did not decide (for reporting), or null. */
  readonly monitored: RuleMatch | null;
  /** The rate limit that counted this request, when one did (for `RateLimit` headers). */
  readonly rateLimit: RateLimitInfo | null;
}
