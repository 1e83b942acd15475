/**
 * What the client answers when it does not let a request through, and the rate-limit headers.
 *
 * - block: the configured response (default `403`, plain text naming the request id).
 * - rate limit: `429` with `Retry-After` (seconds) and the IETF httpapi-ratelimit-headers
 *   structured-field pair, as express-rate-limit's `draft-8` mode sends it:
 *   `RateLimit-Policy: "<ruleId>";q=<limit>;w=<windowSeconds>` and
 *   `RateLimit: "<ruleId>";r=<remaining>;t=<resetSeconds>`. The anchor answered 403 (defect 11).
 * - fail closed (no snapshot yet, or the WAF failed, with `failMode: "closed"`): `503` with
 *   `Retry-After: 5`: the refusal is temporary and not the client's fault.
 *
 * Every refusal carries `X-Request-Id` and `Cache-Control: no-store` (a cached 403 would block
 * a client after the rule is gone).
 */
import type { RateLimitInfo } from '@rampart/rules-core/evaluator/decision';
import type { BlockResponse } from '../config/options.js';

export interface Refusal {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const REQUEST_ID_PLACEHOLDER = '{requestId}';

export function blockRefusal(config: BlockResponse, requestId: string): Refusal {
  const body = config.body.includes(REQUEST_ID_PLACEHOLDER)
    ? config.body.split(REQUEST_ID_PLACEHOLDER).join(requestId)
    : config.body;
  return {
    status: config.status,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      ...config.headers,
      'x-request-id': requestId,
    },
    body,
  };
}

export function rateLimitRefusal(info: RateLimitInfo, requestId: string): Refusal {
  return {
    status: 429,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': String(info.resetSeconds),
      ...rateLimitHeaders(info),
      'x-request-id': requestId,
    },
    body: `Too Many Requests (request id ${requestId})\n`,
  };
}

export function unavailableRefusal(requestId: string): Refusal {
  return {
    status: 503,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': '5',
      'x-request-id': requestId,
    },
    body: `Service Unavailable (request id ${requestId})\n`,
  };
}

/** The `RateLimit-Policy` and `RateLimit` headers for a request a rate-limit rule counted. */
export function rateLimitHeaders(info: RateLimitInfo): {
  'ratelimit-policy': string;
  ratelimit: string;
} {
  const policy = policyOf(info);
  return {
    'ratelimit-policy': policy.header,
    ratelimit: `${policy.name};r=${info.remaining};t=${info.resetSeconds}`,
  };
}

interface Policy {
  readonly limit: number;
  readonly windowSeconds: number;
  /** The rule id as a structured-field string. */
  readonly name: string;
  /** The `RateLimit-Policy` value. */
  readonly header: string;
}

/**
 * Policies by rule id. A site-wide limit puts these headers on every response, so the parts that
 * only change with the rule are built once. Bounded: cleared when rule churn fills it.
 */
const policies = new Map<string, Policy>();
const MAX_POLICIES = 1024;

function policyOf(info: RateLimitInfo): Policy {
  const known = policies.get(info.ruleId);
  if (known && known.limit === info.limit && known.windowSeconds === info.windowSeconds)
    return known;
  if (policies.size >= MAX_POLICIES) policies.clear();
  const name = quoteKey(info.ruleId);
  const policy: Policy = {
    limit: info.limit,
    windowSeconds: info.windowSeconds,
    name,
    header: `${name};q=${info.limit};w=${info.windowSeconds}`,
  };
  policies.set(info.ruleId, policy);
  return policy;
}

/** A structured-field string (RFC 8941 sf-string): rule ids are [A-Za-z0-9_.:-], quoting is enough. */
function quoteKey(id: string): string {
  return `"${id.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
