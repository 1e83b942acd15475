/**
 * The detectors: what each reads of a report batch, what it counts, and when it fires.
 *
 * `observe` (pure) turns a batch into increments per detector and subject; `detect` adds them to
 * the shared {@link WindowCounters} and judges the totals against the site's settings, returning
 * findings: what to block, why, and the evidence. Findings are proposals: the automatic-blocks
 * service drops those an allow rule covers or that a standing block already handles.
 */
import type { RateLimitKey } from '@rampart/rules-core/rules/model';
import type { ReportBatch } from '../reports/report-batch.js';
import type { Labeler } from '../reports/report-store.js';
import type {
  DetectionSettings,
  DetectorAction,
  DetectorMode,
  DetectorName,
  SurgeSettings,
} from './detection-settings.js';
import { MAX_SAMPLES, type WindowCounters } from './window-counters.js';

/** What a finding blocks. */
export type BlockSubject =
  | { readonly kind: 'ip'; readonly addresses: readonly string[] }
  | { readonly kind: 'asn'; readonly asn: number }
  | { readonly kind: 'country'; readonly country: string }
  /** A rate-limit key that is a header value: requests carrying it. */
  | { readonly kind: 'header'; readonly name: string; readonly value: string };

export interface Evidence {
  /** What was counted within the window (failed logins, requests, ...). */
  readonly count: number;
  readonly threshold: number;
  readonly windowSeconds: number;
  /** Share detectors: the logins judged, and the share of them that failed. */
  readonly attempts?: number;
  readonly share?: number;
  /** The account (its HMAC, never the name) of a distributed attack. */
  readonly account?: string;
  /** Distinct addresses the failures came from (per-account and surge detectors). */
  readonly addresses?: number;
  /** Surge detector: the failed logins such a window usually holds (from the baseline). */
  readonly baseline?: number;
  /** The rate-limit rule whose fleet-wide limit was exceeded, and the key. */
  readonly ruleId?: string;
  readonly key?: string;
  /** Some of the requests that counted (ids as the clients reported them). */
  readonly sampleRequestIds: readonly string[];
}

export interface Finding {
  readonly detector: DetectorName;
  readonly subject: BlockSubject;
  readonly mode: DetectorMode;
  readonly action: DetectorAction;
  readonly blockSeconds: number;
  readonly evidence: Evidence;
}

/** A rate-limit rule of the site, as the fleet-wide summing needs it. */
export interface RateLimitRuleInfo {
  readonly id: string;
  readonly limit: number;
  readonly windowSeconds: number;
  readonly key: RateLimitKey;
}

/** Increments per subject, and request ids that counted. */
class Tally {
  readonly amounts = new Map<string, number>();
  readonly samples = new Map<string, string[]>();

  add(subject: string, amount: number, requestId?: string): void {
    this.amounts.set(subject, (this.amounts.get(subject) ?? 0) + amount);
    if (requestId === undefined) return;
    const list = this.samples.get(subject);
    if (list === undefined) this.samples.set(subject, [requestId]);
    else if (list.length < MAX_SAMPLES) list.push(requestId);
  }
}

export interface Observations {
  readonly failedByIp: Tally;
  readonly failedByAccount: Tally;
  /** Per account: the addresses that failed on it in this batch. */
  readonly accountAddresses: Map<string, Set<string>>;
  readonly loginsByAsn: Tally;
  readonly failedByAsn: Tally;
  readonly loginsByCountry: Tally;
  readonly failedByCountry: Tally;
  readonly requestsByIp: Tally;
  readonly requestsByAsn: Tally;
  readonly badAgentsByIp: Tally;
  /** `ruleId NUL key` -> hits. */
  readonly rateLimitKeys: Tally;
}

/** What `batch` adds to each detector's counts (pure). */
export function observe(
  batch: ReportBatch,
  label: Labeler,
  settings: DetectionSettings,
): Observations {
  const o: Observations = {
    failedByIp: new Tally(),
    failedByAccount: new Tally(),
    accountAddresses: new Map(),
    loginsByAsn: new Tally(),
    failedByAsn: new Tally(),
    loginsByCountry: new Tally(),
    failedByCountry: new Tally(),
    requestsByIp: new Tally(),
    requestsByAsn: new Tally(),
    badAgentsByIp: new Tally(),
    rateLimitKeys: new Tally(),
  };
  for (const s of batch.signals) {
    if (s.ip === '') continue;
    const failed = s.kind === 'login_failed';
    const { asn, country } = label(s.ip);
    if (failed) {
      o.failedByIp.add(s.ip, 1, s.requestId);
      if (s.account !== null) {
        o.failedByAccount.add(s.account, 1, s.requestId);
        const seen = o.accountAddresses.get(s.account) ?? new Set<string>();
        o.accountAddresses.set(s.account, seen.add(s.ip));
      }
    }
    if (asn !== null) {
      o.loginsByAsn.add(String(asn), 1);
      if (failed) o.failedByAsn.add(String(asn), 1, s.requestId);
    }
    if (country !== null) {
      o.loginsByCountry.add(country, 1);
      if (failed) o.failedByCountry.add(country, 1, s.requestId);
    }
  }
  for (const a of batch.addressCounts) {
    if (a.ip === '' || a.count === 0) continue;
    o.requestsByIp.add(a.ip, a.count);
    const { asn } = label(a.ip);
    if (asn !== null) o.requestsByAsn.add(String(asn), a.count);
  }
  const patterns = settings.badUserAgents.patterns.map((p) => p.toLowerCase());
  if (patterns.length > 0)
    for (const e of batch.events) {
      if (e.ip === '' || e.userAgent === '') continue;
      const agent = e.userAgent.toLowerCase();
      if (patterns.some((p) => agent.includes(p))) o.badAgentsByIp.add(e.ip, 1, e.requestId);
    }
  for (const k of batch.rateLimitKeys) o.rateLimitKeys.add(`${k.ruleId}\u0000${k.key}`, k.count);
  return o;
}

export interface DetectContext {
  readonly siteId: string;
  readonly settings: DetectionSettings;
  readonly counters: WindowCounters;
  readonly rateLimitRules: readonly RateLimitRuleInfo[];
  readonly now: number;
}

/** Counts the observations and returns what fired. */
export async function detect(o: Observations, ctx: DetectContext): Promise<Finding[]> {
  const findings: Finding[] = [];
  const { settings: s, siteId } = ctx;
  const series = (name: string) => `${siteId}:${name}`;

  const windowed = async (
    detector: 'failedLoginsPerIp' | 'requestRateIp' | 'requestRateAsn' | 'badUserAgents',
    tally: Tally,
    subjectOf: (subject: string) => BlockSubject | null,
  ) => {
    const set = s[detector];
    if (!set.enabled || tally.amounts.size === 0) return;
    const windowMs = set.windowSeconds * 1000;
    const [totals] = await Promise.all([
      ctx.counters.add(series(detector), windowMs, tally.amounts, ctx.now),
      ctx.counters.sample(series(detector), tally.samples, windowMs),
    ]);
    for (const [subject, count] of totals) {
      if (count < set.threshold) continue;
      const blocked = subjectOf(subject);
      if (blocked === null) continue;
      findings.push({
        detector,
        subject: blocked,
        mode: set.mode,
        action: set.action,
        blockSeconds: set.blockSeconds,
        evidence: {
          count,
          threshold: set.threshold,
          windowSeconds: set.windowSeconds,
          sampleRequestIds: await ctx.counters.samples(series(detector), subject),
        },
      });
    }
  };
  const address = (ip: string): BlockSubject => ({ kind: 'ip', addresses: [ip] });
  const asnOf = (text: string): BlockSubject => ({ kind: 'asn', asn: Number(text) });

  await windowed('failedLoginsPerIp', o.failedByIp, address);
  await windowed('requestRateIp', o.requestsByIp, address);
  await windowed('requestRateAsn', o.requestsByAsn, asnOf);
  await windowed('badUserAgents', o.badAgentsByIp, address);
  await perAccount(o, ctx, findings);
  await surge(o, ctx, findings);
  await share('failedLoginShareAsn', o.loginsByAsn, o.failedByAsn, asnOf, ctx, findings);
  await share(
    'failedLoginShareCountry',
    o.loginsByCountry,
    o.failedByCountry,
    (country) => ({ kind: 'country', country }),
    ctx,
    findings,
  );
  await fleetLimits(o, ctx, findings);
  return findings;
}

async function perAccount(o: Observations, ctx: DetectContext, findings: Finding[]) {
  const set = ctx.settings.failedLoginsPerAccount;
  if (!set.enabled || o.failedByAccount.amounts.size === 0) return;
  const name = `${ctx.siteId}:failedLoginsPerAccount`;
  const windowMs = set.windowSeconds * 1000;
  const [failures, addresses] = await Promise.all([
    ctx.counters.add(name, windowMs, o.failedByAccount.amounts, ctx.now),
    ctx.counters.distinct(name, windowMs, o.accountAddresses, ctx.now),
    ctx.counters.sample(name, o.failedByAccount.samples, windowMs),
  ]);
  for (const [account, count] of failures) {
    const distinct = addresses.get(account) ?? 0;
    if (count < set.threshold || distinct < set.minAddresses) continue;
    findings.push({
      detector: 'failedLoginsPerAccount',
      subject: { kind: 'ip', addresses: await ctx.counters.members(name, account) },
      mode: set.mode,
      action: set.action,
      blockSeconds: set.blockSeconds,
      evidence: {
        count,
        threshold: set.threshold,
        windowSeconds: set.windowSeconds,
        account,
        addresses: distinct,
        sampleRequestIds: await ctx.counters.samples(name, account),
      },
    });
  }
}

/** What a window of a site's failed logins looked like, for {@link judgeSurge}. */
export interface SurgeWindow {
  /** Failed logins across the site within the window. */
  readonly failures: number;
  /** Distinct addresses they came from. */
  readonly addresses: number;
  /** Failed logins within the baseline period (the window included). */
  readonly baselineFailures: number;
}

/**
 * Whether the window is a surge under `set`, and the failed logins such a window usually holds:
 * the baseline period's average, scaled to the window. The baseline includes the window itself,
 * so a surge long enough to dominate the baseline stops counting as one (its blocks stand; the
 * per-address detectors go on).
 */
export function judgeSurge(
  w: SurgeWindow,
  set: SurgeSettings,
): { readonly surging: boolean; readonly usual: number } {
  const usual = (w.baselineFailures * set.windowSeconds) / set.baselineSeconds;
  const surging =
    w.failures >= set.minFailures &&
    w.addresses >= set.minAddresses &&
    w.failures >= set.factor * usual;
  return { surging, usual: Math.round(usual * 100) / 100 };
}

/**
 * Stuffing spread over many addresses, each failing a few times: no address reaches the per-IP
 * threshold for a long while, but the site's failed logins jump. While they do, the addresses
 * failing repeatedly are blocked.
 */
async function surge(o: Observations, ctx: DetectContext, findings: Finding[]) {
  const set = ctx.settings.failedLoginSurge;
  if (!set.enabled || o.failedByIp.amounts.size === 0) return;
  const name = `${ctx.siteId}:failedLoginSurge`;
  const windowMs = set.windowSeconds * 1000;
  let failed = 0;
  for (const n of o.failedByIp.amounts.values()) failed += n;
  const site = new Map([['site', failed]]);
  const [recent, baseline, addresses, perAddress] = await Promise.all([
    ctx.counters.add(`${name}:site`, windowMs, site, ctx.now),
    ctx.counters.add(`${name}:baseline`, set.baselineSeconds * 1000, site, ctx.now),
    ctx.counters.distinct(
      name,
      windowMs,
      new Map([['site', new Set(o.failedByIp.amounts.keys())]]),
      ctx.now,
    ),
    ctx.counters.add(`${name}:ip`, windowMs, o.failedByIp.amounts, ctx.now),
  ]);
  const window: SurgeWindow = {
    failures: recent.get('site') ?? 0,
    addresses: addresses.get('site') ?? 0,
    baselineFailures: baseline.get('site') ?? 0,
  };
  const { surging, usual } = judgeSurge(window, set);
  if (!surging) return;
  const repeated = [...perAddress].filter(([, n]) => n >= set.perAddress).map(([ip]) => ip);
  if (repeated.length === 0) return;
  findings.push({
    detector: 'failedLoginSurge',
    subject: { kind: 'ip', addresses: repeated },
    mode: set.mode,
    action: set.action,
    blockSeconds: set.blockSeconds,
    evidence: {
      count: window.failures,
      threshold: set.minFailures,
      windowSeconds: set.windowSeconds,
      addresses: window.addresses,
      baseline: usual,
      sampleRequestIds: repeated
        .flatMap((ip) => o.failedByIp.samples.get(ip) ?? [])
        .slice(0, MAX_SAMPLES),
    },
  });
}

async function share(
  detector: 'failedLoginShareAsn' | 'failedLoginShareCountry',
  logins: Tally,
  failed: Tally,
  subjectOf: (subject: string) => BlockSubject,
  ctx: DetectContext,
  findings: Finding[],
) {
  const set = ctx.settings[detector];
  if (!set.enabled || logins.amounts.size === 0) return;
  const name = `${ctx.siteId}:${detector}`;
  const windowMs = set.windowSeconds * 1000;
  const [all, failures] = await Promise.all([
    ctx.counters.add(`${name}:all`, windowMs, logins.amounts, ctx.now),
    // Every subject with logins is read back, so a batch of successes is judged too.
    ctx.counters.add(
      `${name}:failed`,
      windowMs,
      new Map([...logins.amounts.keys()].map((k) => [k, failed.amounts.get(k) ?? 0])),
      ctx.now,
    ),
    ctx.counters.sample(name, failed.samples, windowMs),
  ]);
  for (const [subject, attempts] of all) {
    const count = failures.get(subject) ?? 0;
    if (attempts < set.minAttempts || count / attempts < set.share) continue;
    findings.push({
      detector,
      subject: subjectOf(subject),
      mode: set.mode,
      action: 'block',
      blockSeconds: set.blockSeconds,
      evidence: {
        count,
        threshold: set.minAttempts,
        windowSeconds: set.windowSeconds,
        attempts,
        share: Math.round((count / attempts) * 1000) / 1000,
        sampleRequestIds: await ctx.counters.samples(name, subject),
      },
    });
  }
}

/** Sums each rate-limit key over the fleet; a key over its rule's limit is blocked. */
async function fleetLimits(o: Observations, ctx: DetectContext, findings: Finding[]) {
  const set = ctx.settings.fleetRateLimits;
  if (!set.enabled || o.rateLimitKeys.amounts.size === 0) return;
  const rules = new Map(ctx.rateLimitRules.map((r) => [r.id, r]));
  const byRule = new Map<string, Map<string, number>>();
  for (const [pair, count] of o.rateLimitKeys.amounts) {
    const [ruleId, key] = pair.split('\u0000') as [string, string];
    if (!rules.has(ruleId)) continue; // a rule removed since
    const keys = byRule.get(ruleId) ?? new Map<string, number>();
    byRule.set(ruleId, keys.set(key, count));
  }
  for (const [ruleId, keys] of byRule) {
    const rule = rules.get(ruleId) as RateLimitRuleInfo;
    const totals = await ctx.counters.add(
      `${ctx.siteId}:fleetRateLimits:${ruleId}`,
      rule.windowSeconds * 1000,
      keys,
      ctx.now,
    );
    for (const [key, count] of totals) {
      if (count <= rule.limit) continue;
      const subject = subjectOfKey(rule.key, key);
      if (subject === null) continue;
      findings.push({
        detector: 'fleetRateLimits',
        subject,
        mode: set.mode,
        action: set.action,
        blockSeconds: set.blockSeconds ?? rule.windowSeconds,
        evidence: {
          count,
          threshold: rule.limit,
          windowSeconds: rule.windowSeconds,
          ruleId,
          key,
          sampleRequestIds: [],
        },
      });
    }
  }
}

/**
 * What a rate-limit key names: the address (for `ip` and `ip_path` keys: the whole address is
 * blocked), or the header value. Long keys the client hashed cannot be matched again: none.
 */
export function subjectOfKey(kind: RateLimitKey, key: string): BlockSubject | null {
  if (key === '' || key.startsWith('\u0000')) return null;
  switch (kind.kind) {
    case 'ip':
      return { kind: 'ip', addresses: [key] };
    case 'ip_path': {
      const space = key.indexOf(' ');
      return space > 0 ? { kind: 'ip', addresses: [key.slice(0, space)] } : null;
    }
    case 'header':
      return { kind: 'header', name: kind.name, value: key };
  }
}
