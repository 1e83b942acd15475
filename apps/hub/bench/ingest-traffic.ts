/**
 * The traffic of `npm run bench:ingest`: report batches in the WAF client's format (version 1,
 * gzipped), made from a fixed seed so every run and every target sees the same ones. A site
 * under attack: blocks by pattern, address, country, AS and reputation rules, rate limits, a
 * monitor-mode rule, and 1% of the passed requests sampled (the client's default); a botnet of a
 * few thousand addresses (a few send most) and tens of thousands of ordinary visitors, thousands
 * of paths, hundreds of user agents, failed logins as signals, rate-limit keys and address
 * counts. Each batch also says what it adds to the hub's counters, so a run can check them.
 */
import { gzipSync } from 'node:zlib';

/** Marsaglia's xorshift32: small, fast and reproducible; plenty for synthetic traffic. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4_294_967_296;
  };
}

const rand = random(20_261_201);

/** The client's default: one passed request in a hundred is sent as an event. */
export const PASS_SAMPLE_RATE = 0.01;
const WEIGHT = Math.round(1 / PASS_SAMPLE_RATE);
const int = (n: number) => Math.floor(rand() * n);
/** Skewed towards the first entries: a few values are frequent, most are rare. */
const skewed = (n: number) => Math.floor(n * rand() ** 3);
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
const hex = (digits: number) => Array.from({ length: digits }, () => int(16).toString(16)).join('');

function publicIpv4(): string {
  for (;;) {
    const a = 1 + int(223);
    const b = int(256);
    if (a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32))
      continue;
    if (a === 192 && b === 168) continue;
    return `${a}.${b}.${int(256)}.${1 + int(254)}`;
  }
}

function publicIpv6(): string {
  const prefixes = ['2a01', '2a02', '2a03', '2001', '2600', '2607', '2804', '2400', '240e'];
  return `${pick(prefixes)}:${hex(4)}:${hex(4)}::${hex(3)}`;
}

/** A botnet (skewed: a few addresses send most) and ordinary visitors (uniform). */
const ATTACKERS = [
  ...Array.from({ length: 3000 }, publicIpv4),
  ...Array.from({ length: 300 }, publicIpv6),
];
const VISITORS = Array.from({ length: 40_000 }, publicIpv4);
const PROBES = [
  '/wp-login.php',
  '/wp-admin/setup-config.php',
  '/xmlrpc.php',
  '/.env',
  '/.git/config',
  '/phpmyadmin/index.php',
  '/admin.php',
  '/cgi-bin/luci',
  '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
  '/actuator/env',
  '/server-status',
  '/boaform/admin/formLogin',
];
const BROWSERS = Array.from({ length: 300 }, (_, i) => {
  const major = 118 + (i % 14);
  return i % 3 === 0
    ? `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.${6000 + i}.${i % 200} Safari/537.36`
    : i % 3 === 1
      ? `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${i % 6} Safari/605.1.15`
      : `Mozilla/5.0 (X11; Linux x86_64; rv:${major}.0) Gecko/20100101 Firefox/${major}.0`;
});
const TOOLS = [
  'sqlmap/1.7.11#stable (https://sqlmap.org)',
  'python-requests/2.31.0',
  'curl/8.5.0',
  'Go-http-client/1.1',
  'Mozilla/5.0 zgrab/0.x',
  'Nuclei - Open-source project (github.com/projectdiscovery/nuclei)',
  'masscan/1.3 (https://github.com/robertdavidgraham/masscan)',
  'Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)',
];
const ACCOUNTS = Array.from({ length: 2000 }, () => hex(64));

interface Rule {
  readonly id: string;
  readonly category: string;
}
const BLOCK_RULES: readonly Rule[] = [
  { id: 'wp-probes', category: 'pattern' },
  { id: 'dotfiles', category: 'pattern' },
  { id: 'sqli-query', category: 'pattern' },
  { id: 'scanner-agents', category: 'pattern' },
  { id: 'bad-addresses', category: 'ip' },
  { id: 'embargo', category: 'country' },
  { id: 'hosting-asns', category: 'asn' },
  { id: 'reputation', category: 'reputation' },
];
const LIMIT_RULES: readonly Rule[] = [
  { id: 'login-rate', category: 'rate_limit' },
  { id: 'api-rate', category: 'rate_limit' },
];
const MONITOR_RULE: Rule = { id: 'new-sqli-monitor', category: 'pattern' };
const ALLOW_RULE = 'office-allow';

export type Kind = 'blocked' | 'rate_limited' | 'monitored' | 'passed';

/** What one batch adds to the hub's counters, to check them exactly afterwards. */
export interface Sent {
  readonly body: Buffer;
  readonly events: number;
  readonly requests: number;
  readonly classes: Readonly<Record<Kind | 'allowed', number>>;
  /** The client address of each event, and the weight it has in the top lists. */
  readonly ips: readonly string[];
  readonly weights: Uint16Array;
  readonly rules: ReadonlyMap<string, number>;
}

function makeBatch(size: number, index: number, periodStart: number, periodEnd: number): Sent {
  const instance = `web-${index % 24}:${4000 + (index % 24)}`;
  const events: unknown[] = [];
  const ips: string[] = [];
  const weights = new Uint16Array(size);
  const classes = { blocked: 0, rate_limited: 0, monitored: 0, passed: 0, allowed: 0 };
  const rules = new Map<string, number>();
  const counts = new Map<
    string,
    { action: string; mode: string; ruleId: string | null; outcome: string; count: number }
  >();
  const count = (
    action: string,
    mode: string,
    ruleId: string | null,
    outcome: string,
    n: number,
  ) => {
    const key = `${action} ${mode} ${ruleId} ${outcome}`;
    const entry = counts.get(key);
    if (entry) entry.count += n;
    else counts.set(key, { action, mode, ruleId, outcome, count: n });
  };
  const limited = new Map<string, number>();
  const addresses = new Map<string, number>();
  const signals: unknown[] = [];
  for (let i = 0; i < size; i++) {
    const time = new Date(periodStart + ((periodEnd - periodStart) * i) / size).toISOString();
    const roll = rand();
    const kind: Kind =
      roll < 0.45 ? 'blocked' : roll < 0.6 ? 'rate_limited' : roll < 0.7 ? 'monitored' : 'passed';
    const ip = kind === 'passed' ? pick(VISITORS) : (ATTACKERS[skewed(ATTACKERS.length)] as string);
    let rule: Rule | null = null;
    let path: string;
    let userAgent = pick(BROWSERS);
    let method = 'GET';
    if (kind === 'blocked') {
      rule = BLOCK_RULES[skewed(BLOCK_RULES.length)] as Rule;
      path = rule.category === 'pattern' ? pick(PROBES) : `/products/${skewed(5000)}`;
      if (rule.id === 'scanner-agents' || rand() < 0.3) userAgent = pick(TOOLS);
    } else if (kind === 'rate_limited') {
      rule = pick(LIMIT_RULES);
      path = rule.id === 'login-rate' ? '/login' : `/api/products/${skewed(2000)}`;
      method = rule.id === 'login-rate' ? 'POST' : 'GET';
      limited.set(`${rule.id} ${ip}`, (limited.get(`${rule.id} ${ip}`) ?? 0) + 1);
    } else if (kind === 'monitored') {
      rule = MONITOR_RULE;
      path = `/search/${skewed(3000)}`;
    } else {
      path =
        rand() < 0.5 ? `/products/${skewed(5000)}` : `/category/${skewed(200)}/page/${int(20)}`;
    }
    const action =
      kind === 'blocked' || kind === 'monitored'
        ? 'block'
        : kind === 'rate_limited'
          ? 'rate_limit'
          : 'pass';
    const mode = kind === 'monitored' ? 'monitor' : 'enforce';
    const outcome =
      kind === 'blocked' ? 'blocked' : kind === 'rate_limited' ? 'rate_limited' : 'passed';
    const sampled = kind === 'passed';
    const requestId = `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
    events.push({
      requestId,
      time,
      ip,
      method,
      host: 'shop.example.com',
      path,
      userAgent,
      action,
      mode,
      outcome,
      ruleId: rule?.id ?? null,
      category: rule?.category ?? null,
      monitoredRuleId: null,
      snapshotVersion: 1,
      sampled,
    });
    ips.push(ip);
    weights[i] = sampled ? WEIGHT : 1;
    if (rule) rules.set(rule.id, (rules.get(rule.id) ?? 0) + 1);
    addresses.set(ip, (addresses.get(ip) ?? 0) + (sampled ? WEIGHT : 1));
    if (sampled) {
      // The sampled event stands for WEIGHT passed requests; the counts carry them all.
      const unsampled = WEIGHT - 1 + int(3) - 1;
      count(action, mode, null, outcome, 1 + unsampled);
      classes.passed += 1 + unsampled;
    } else {
      count(action, mode, rule?.id ?? null, outcome, 1);
      classes[kind]++;
    }
    if (kind === 'rate_limited' && path === '/login' && rand() < 0.5)
      signals.push({
        kind: 'login_failed',
        requestId,
        time,
        ip,
        path,
        userAgent,
        account: pick(ACCOUNTS),
      });
  }
  const allowed = 5 + int(20);
  count('allow', 'enforce', ALLOW_RULE, 'passed', allowed);
  classes.allowed += allowed;
  const batch = {
    version: 1,
    batchId: `bench-${index.toString(36).padStart(6, '0')}-${hex(16)}`,
    instance,
    snapshotVersion: 1,
    periodStart: new Date(periodStart).toISOString(),
    periodEnd: new Date(periodEnd).toISOString(),
    passSampleRate: PASS_SAMPLE_RATE,
    dropped: 0,
    counts: [...counts.values()],
    events,
    signals,
    rateLimitKeys: [...limited].map(([key, n]) => {
      const [ruleId, ip] = key.split(' ');
      return { ruleId, key: ip, count: n };
    }),
    addressCounts: [...addresses].map(([ip, n]) => ({ ip, count: n })),
  };
  const requests = Object.values(classes).reduce((a, b) => a + b, 0);
  return {
    body: gzipSync(JSON.stringify(batch)),
    events: size,
    requests,
    classes,
    ips,
    weights,
    rules,
  };
}

/**
 * `count` batches of `size` events from a fleet over the `spanMs` before now (the minutes they
 * are filed under are those of a real run of that length).
 */
export function makeBatches(count: number, size: number, spanMs: number): Sent[] {
  const end = Date.now();
  const start = end - spanMs;
  const step = spanMs / count;
  return Array.from({ length: count }, (_, i) =>
    makeBatch(size, i, start + i * step, start + (i + 1) * step),
  );
}
