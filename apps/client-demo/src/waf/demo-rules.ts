/**
 * The demo site's rules, in the hub's JSON rule format: what `npm run dev` gives a fresh demo
 * site (edit them in the hub afterwards), and the core that the demo's tests and its benchmark
 * start from, each saying what it changes or adds.
 *
 * One of each thing the shop needs: probes for software it does not run, a well-known scanner,
 * credential stuffing against its login form, and a rule in `monitor` mode that only watches.
 */

/** A rule as the hub's API and `parseRuleSet` take it. */
export type RuleJson = Readonly<Record<string, unknown>>;

/** The id of the login rate limit, for variants that change its limit. */
export const LOGIN_RATE_RULE = 'login-rate';

export const DEMO_RULES: readonly RuleJson[] = [
  {
    id: 'no-wp-admin',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    note: 'nothing here is WordPress: probes only',
  },
  {
    id: 'no-scanners',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
    note: 'a well-known scanner',
  },
  {
    id: LOGIN_RATE_RULE,
    type: 'rate_limit',
    methods: ['POST'],
    when: [{ field: 'path', match: 'exact', value: '/login' }],
    key: { kind: 'ip' },
    windowSeconds: 60,
    limit: 10,
    note: 'credential stuffing: 10 login attempts per minute per address',
  },
  {
    id: 'watch-dotfiles',
    type: 'pattern',
    action: 'block',
    mode: 'monitor',
    when: [{ field: 'path', match: 'prefix', value: '/.' }],
    note: 'monitor only: see what probes for /.env, /.git and friends',
  },
];

/** The demo rules with the login rate limit set to `limit` attempts per window. */
export function withLoginLimit(limit: number): RuleJson[] {
  return DEMO_RULES.map((rule) => (rule.id === LOGIN_RATE_RULE ? { ...rule, limit } : rule));
}
