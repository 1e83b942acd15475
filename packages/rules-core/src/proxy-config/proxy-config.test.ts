import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTENT_TYPES,
  DEFAULT_PROXY_MAX_BUFFERED_BYTES,
  describeProxyConfigIssues,
  MAX_PROXY_BUFFERED_BYTES,
  MAX_RULES_PER_SET,
  type ProxyConfig,
  type ProxyConfigIssue,
  parseProxyConfig,
} from './proxy-config.js';

/** The issues of a document that must be refused as a whole. */
function issuesOf(json: unknown): readonly ProxyConfigIssue[] {
  const result = parseProxyConfig(json);
  if (result.ok)
    throw new Error(`expected the configuration to be refused: ${JSON.stringify(json)}`);
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) expect(issue.reason).not.toBe('');
  return result.issues;
}

/** The normalised configuration of a document that must be accepted. */
function configOf(json: unknown): ProxyConfig {
  const result = parseProxyConfig(json);
  if (!result.ok) {
    throw new Error(
      `expected the configuration to be accepted: ${describeProxyConfigIssues(result.issues)}`,
    );
  }
  return result.config;
}

const fields = (issues: readonly ProxyConfigIssue[]) => issues.map((i) => i.field);

const UPSTREAM = 'http://127.0.0.1:3000';
const route = (extra: Record<string, unknown> = {}) => ({
  host: 'shop.example',
  upstream: UPSTREAM,
  ...extra,
});
/** A document with one route, otherwise valid. */
const withRoute = (extra: Record<string, unknown>) => ({ routes: [route(extra)] });
/** A document with one rule set, otherwise valid. */
const withRuleSet = (set: Record<string, unknown>) => ({
  ruleSets: [{ pathPrefix: '/', rules: [], ...set }],
});
/** A document whose one rule set has `rule` after a valid one (so the index is visible). */
const withRule = (rule: Record<string, unknown>) =>
  withRuleSet({ rules: [{ pattern: 'ok', replacement: 'fine' }, rule] });

/** The only issue of `json`, which must name `field`. */
function onlyIssue(json: unknown, field: string): ProxyConfigIssue {
  const issues = issuesOf(json);
  expect(fields(issues)).toEqual([field]);
  return issues[0] as ProxyConfigIssue;
}

describe('parseProxyConfig', () => {
  describe('a valid document', () => {
    it('gets every default filled in', () => {
      const config = configOf({
        routes: [{ host: 'shop.example', upstream: UPSTREAM }],
        ruleSets: [{ pathPrefix: '/', rules: [{ pattern: 'a', replacement: 'b' }] }],
      });
      expect(config).toEqual({
        routes: [
          {
            host: 'shop.example',
            upstream: UPSTREAM,
            contentTypes: ['text/html'],
            maxBufferedBytes: 8192,
            keepLastModified: false,
            preserveHost: false,
          },
        ],
        ruleSets: [
          {
            pathPrefix: '/',
            matchKind: 'leftmost-first',
            rules: [{ pattern: 'a', replacement: 'b', flags: '' }],
          },
        ],
        edgeWaf: false,
      });
      expect(DEFAULT_CONTENT_TYPES).toEqual(['text/html']);
      expect(DEFAULT_PROXY_MAX_BUFFERED_BYTES).toBe(8192);
    });

    it('may be empty: no routes, no rule sets, no edge WAF', () => {
      expect(configOf({})).toEqual({ routes: [], ruleSets: [], edgeWaf: false });
    });

    it('keeps every option that is given', () => {
      const config = configOf({
        routes: [
          route({
            contentTypes: ['text/html', '*', 'application/*'],
            maxBufferedBytes: 0,
            keepLastModified: true,
            preserveHost: true,
          }),
        ],
        ruleSets: [
          {
            pathPrefix: '/blog/',
            matchKind: 'leftmost-longest',
            rules: [{ pattern: 'colou?r', replacement: '[$&]', flags: 'gi' }],
          },
        ],
        edgeWaf: true,
      });
      expect(config.routes[0]).toMatchObject({
        contentTypes: ['text/html', '*', 'application/*'],
        maxBufferedBytes: 0,
        keepLastModified: true,
        preserveHost: true,
      });
      expect(config.ruleSets[0]).toEqual({
        pathPrefix: '/blog/',
        matchKind: 'leftmost-longest',
        rules: [{ pattern: 'colou?r', replacement: '[$&]', flags: 'gi' }],
      });
      expect(config.edgeWaf).toBe(true);
    });

    it('lowercases hosts and content types', () => {
      const config = configOf({
        routes: [
          route({
            host: 'Shop.EXAMPLE:8080',
            contentTypes: ['Text/HTML', 'APPLICATION/XHTML+XML'],
          }),
        ],
      });
      expect(config.routes[0]?.host).toBe('shop.example:8080');
      expect(config.routes[0]?.contentTypes).toEqual(['text/html', 'application/xhtml+xml']);
    });

    it('normalises the upstream to its origin (a trailing slash and a default port are accepted)', () => {
      const upstreamOf = (upstream: string) =>
        configOf(withRoute({ upstream })).routes[0]?.upstream;
      expect(upstreamOf('http://127.0.0.1:3000/')).toBe('http://127.0.0.1:3000');
      expect(upstreamOf('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
      expect(upstreamOf('HTTPS://Origin.Example:443/')).toBe('https://origin.example');
      expect(upstreamOf('http://[::1]:8080')).toBe('http://[::1]:8080');
    });

    it('accepts the maximum buffer size and exactly MAX_RULES_PER_SET rules', () => {
      const rules = Array.from({ length: MAX_RULES_PER_SET }, (_, i) => ({
        pattern: `word${i}`,
        replacement: 'x',
      }));
      const config = configOf({
        routes: [route({ maxBufferedBytes: MAX_PROXY_BUFFERED_BYTES })],
        ruleSets: [{ pathPrefix: '/', rules }],
      });
      expect(config.routes[0]?.maxBufferedBytes).toBe(MAX_PROXY_BUFFERED_BYTES);
      expect(config.ruleSets[0]?.rules).toHaveLength(MAX_RULES_PER_SET);
    });
  });

  describe('an invalid document is refused as a whole, each issue naming its field and a reason', () => {
    it('refuses a document that is not an object', () => {
      for (const json of [null, undefined, 'routes', 42, true, []]) {
        const issue = onlyIssue(json, '');
        expect(issue.reason).toMatch(/must be an object/);
      }
    });

    it('refuses an unknown top-level key', () => {
      const issue = onlyIssue({ routes: [], rules: [] }, 'rules');
      expect(issue.reason).toMatch(/is not a field/);
      expect(issue.reason).toMatch(/routes, ruleSets, edgeWaf/);
    });

    it('refuses routes and ruleSets that are not lists', () => {
      expect(onlyIssue({ routes: {} }, 'routes').reason).toMatch(/must be a list/);
      expect(onlyIssue({ ruleSets: 'x' }, 'ruleSets').reason).toMatch(/must be a list/);
    });

    it('refuses a route that is not an object', () => {
      expect(onlyIssue({ routes: ['shop.example'] }, 'routes[0]').reason).toMatch(/object/);
    });

    it('refuses an unknown route key', () => {
      const issue = onlyIssue(withRoute({ proxyPass: 'http://x' }), 'routes[0].proxyPass');
      expect(issue.reason).toMatch(/is not a field/);
    });

    it('refuses a route without a host', () => {
      expect(onlyIssue({ routes: [{ upstream: UPSTREAM }] }, 'routes[0].host').reason).toMatch(
        /required/,
      );
      expect(onlyIssue(withRoute({ host: '' }), 'routes[0].host').reason).toMatch(/required/);
      expect(onlyIssue(withRoute({ host: 7 }), 'routes[0].host').reason).toMatch(/required/);
    });

    it('refuses a host that is not a host name with an optional port', () => {
      for (const host of ['a b', 'http://x', 'shop.example/', '-shop.example', 'shop.', 'x:']) {
        const issue = onlyIssue(withRoute({ host }), 'routes[0].host');
        expect(issue.reason).toContain(JSON.stringify(host));
        expect(issue.reason).toMatch(/not a host name/);
      }
    });

    it('refuses a repeated host, naming the earlier route (hosts compare lowercased)', () => {
      const issue = onlyIssue(
        {
          routes: [
            route({ host: 'shop.example' }),
            route({ host: 'other.example' }),
            route({ host: 'SHOP.example' }),
          ],
        },
        'routes[2].host',
      );
      expect(issue.reason).toBe('repeats routes[0].host');
    });

    it('refuses an upstream that is missing or not a URL', () => {
      expect(onlyIssue({ routes: [{ host: 'a' }] }, 'routes[0].upstream').reason).toMatch(
        /required/,
      );
      const issue = onlyIssue(withRoute({ upstream: '127.0.0.1:3000:x' }), 'routes[0].upstream');
      expect(issue.reason).toMatch(/is not a URL/);
      expect(onlyIssue(withRoute({ upstream: 'nope' }), 'routes[0].upstream').reason).toBe(
        '"nope" is not a URL',
      );
    });

    it('refuses an upstream that is not http or https', () => {
      const issue = onlyIssue(withRoute({ upstream: 'ftp://files.example' }), 'routes[0].upstream');
      expect(issue.reason).toMatch(/http:\/\/ or https:\/\//);
      expect(issue.reason).toMatch(/ftp:/);
    });

    it('refuses an upstream with credentials', () => {
      for (const upstream of ['http://user@origin.example', 'http://user:secret@origin.example']) {
        const issue = onlyIssue(withRoute({ upstream }), 'routes[0].upstream');
        expect(issue.reason).toMatch(/credentials/);
      }
    });

    it('refuses an upstream with a path, query or fragment', () => {
      for (const upstream of [
        'http://origin.example/app',
        'http://origin.example/?q=1',
        'http://origin.example/#top',
      ]) {
        const issue = onlyIssue(withRoute({ upstream }), 'routes[0].upstream');
        expect(issue.reason).toMatch(/without path, query or fragment/);
      }
    });

    it('refuses contentTypes that is not a list, and each bad entry by its index', () => {
      expect(
        onlyIssue(withRoute({ contentTypes: 'text/html' }), 'routes[0].contentTypes').reason,
      ).toMatch(/must be a list/);
      const issues = issuesOf(
        withRoute({ contentTypes: ['text/html', 'text/html; charset=utf-8', 3, 'html'] }),
      );
      expect(fields(issues)).toEqual([
        'routes[0].contentTypes[1]',
        'routes[0].contentTypes[2]',
        'routes[0].contentTypes[3]',
      ]);
      for (const issue of issues) expect(issue.reason).toMatch(/media type/);
    });

    it('refuses a maxBufferedBytes that is negative, fractional, too large or not a number', () => {
      for (const maxBufferedBytes of [-1, 1.5, MAX_PROXY_BUFFERED_BYTES + 1, '8192', Number.NaN]) {
        const issue = onlyIssue(withRoute({ maxBufferedBytes }), 'routes[0].maxBufferedBytes');
        expect(issue.reason).toBe(`must be an integer from 0 to ${MAX_PROXY_BUFFERED_BYTES}`);
      }
    });

    it('refuses keepLastModified, preserveHost and edgeWaf that are not booleans', () => {
      expect(
        onlyIssue(withRoute({ keepLastModified: 'yes' }), 'routes[0].keepLastModified').reason,
      ).toBe('must be true or false');
      expect(onlyIssue(withRoute({ preserveHost: 1 }), 'routes[0].preserveHost').reason).toBe(
        'must be true or false',
      );
      expect(onlyIssue({ edgeWaf: 'on' }, 'edgeWaf').reason).toBe('must be true or false');
    });

    it('refuses a rule set that is not an object, or has an unknown key', () => {
      expect(onlyIssue({ ruleSets: [[]] }, 'ruleSets[0]').reason).toMatch(/object/);
      expect(onlyIssue(withRuleSet({ location: '/' }), 'ruleSets[0].location').reason).toMatch(
        /is not a field/,
      );
    });

    it('refuses a pathPrefix that is missing or does not start with "/"', () => {
      for (const pathPrefix of [undefined, '', 'blog/', 7]) {
        const issue = onlyIssue(withRuleSet({ pathPrefix }), 'ruleSets[0].pathPrefix');
        expect(issue.reason).toMatch(/starting with "\/"/);
      }
    });

    it('refuses a pathPrefix with a query, fragment or space', () => {
      for (const pathPrefix of ['/search?q', '/page#top', '/a b']) {
        const issue = onlyIssue(withRuleSet({ pathPrefix }), 'ruleSets[0].pathPrefix');
        expect(issue.reason).toMatch(/without query, fragment or spaces/);
      }
    });

    it('refuses a repeated pathPrefix, naming the earlier rule set', () => {
      const issue = onlyIssue(
        {
          ruleSets: [
            { pathPrefix: '/blog', rules: [] },
            { pathPrefix: '/', rules: [] },
            { pathPrefix: '/blog', rules: [] },
          ],
        },
        'ruleSets[2].pathPrefix',
      );
      expect(issue.reason).toBe('repeats ruleSets[0].pathPrefix');
    });

    it('refuses a matchKind other than leftmost-first or leftmost-longest', () => {
      for (const matchKind of ['longest', 'LEFTMOST-FIRST', 1, null]) {
        const issue = onlyIssue(withRuleSet({ matchKind }), 'ruleSets[0].matchKind');
        expect(issue.reason).toBe('must be "leftmost-first" or "leftmost-longest"');
      }
    });

    it('refuses a rule that is not an object, or has an unknown key', () => {
      expect(onlyIssue(withRuleSet({ rules: ['a'] }), 'ruleSets[0].rules[0]').reason).toMatch(
        /must be an object/,
      );
      expect(
        onlyIssue(
          withRule({ pattern: 'a', replacement: 'b', mode: 'g' }),
          'ruleSets[0].rules[1].mode',
        ).reason,
      ).toMatch(/is not a field/);
    });

    it('refuses a rule without a pattern, or with an empty one', () => {
      for (const rule of [
        { replacement: 'b' },
        { pattern: '', replacement: 'b' },
        { pattern: 1, replacement: 'b' },
      ]) {
        const issue = onlyIssue(withRule(rule), 'ruleSets[0].rules[1].pattern');
        expect(issue.reason).toBe('must be a non-empty string');
      }
    });

    it('refuses a rule whose replacement is not a string', () => {
      for (const rule of [
        { pattern: 'a' },
        { pattern: 'a', replacement: 1 },
        { pattern: 'a', replacement: null },
      ]) {
        const issue = onlyIssue(withRule(rule), 'ruleSets[0].rules[1].replacement');
        expect(issue.reason).toBe('must be a string');
      }
    });

    it('refuses rule flags that are not a string', () => {
      for (const flags of [['g'], true, 1, null]) {
        const issue = onlyIssue(
          withRule({ pattern: 'a', replacement: 'b', flags }),
          'ruleSets[0].rules[1].flags',
        );
        expect(issue.reason).toMatch(/must be a string, a subset of "gi"/);
      }
    });

    it('refuses more than MAX_RULES_PER_SET rules in one set', () => {
      const rules = Array.from({ length: MAX_RULES_PER_SET + 1 }, () => ({
        pattern: 'a',
        replacement: 'b',
      }));
      const issue = onlyIssue(withRuleSet({ rules }), 'ruleSets[0].rules');
      expect(issue.reason).toBe(
        `has ${MAX_RULES_PER_SET + 1} entries; at most ${MAX_RULES_PER_SET} are allowed`,
      );
    });
  });

  describe('a rule the engine cannot run is refused with its construct and position', () => {
    it('refuses a lookahead', () => {
      const issue = onlyIssue(
        withRule({ pattern: 'a(?=b)', replacement: 'x' }),
        'ruleSets[0].rules[1]',
      );
      expect(issue.reason).toMatch(/lookahead/);
      expect(issue.reason).toMatch(/position 1/);
      expect(issue.reason).toContain('"a(?=b)"');
    });

    it('refuses a backreference', () => {
      const issue = onlyIssue(
        withRule({ pattern: '(a)\\1', replacement: 'x' }),
        'ruleSets[0].rules[1]',
      );
      expect(issue.reason).toMatch(/backreference/);
      expect(issue.reason).toMatch(/position 3/);
    });

    it('refuses an unknown flag', () => {
      const issue = onlyIssue(
        withRule({ pattern: 'a', replacement: 'x', flags: 'gx' }),
        'ruleSets[0].rules[1]',
      );
      expect(issue.reason).toMatch(/unknown flag "x"/);
      expect(issue.reason).toMatch(/subset of "gi"/);
    });

    it('refuses a replacement ending in a lone "$"', () => {
      const issue = onlyIssue(
        withRule({ pattern: 'a', replacement: 'x$' }),
        'ruleSets[0].rules[1]',
      );
      expect(issue.reason).toMatch(/replacement position 1/);
      expect(issue.reason).toMatch(/trailing lone "\$"/);
    });

    it('refuses an nginx variable in the replacement', () => {
      const issue = onlyIssue(
        withRule({ pattern: 'a', replacement: 'at $host' }),
        'ruleSets[0].rules[1]',
      );
      expect(issue.reason).toMatch(/replacement position 3/);
      expect(issue.reason).toMatch(/nginx variables \("\$host"\)/);
    });

    it('names the rule by its index in the set it belongs to', () => {
      const issue = onlyIssue(
        {
          ruleSets: [
            { pathPrefix: '/', rules: [{ pattern: 'ok', replacement: 'x' }] },
            {
              pathPrefix: '/blog',
              rules: [
                { pattern: 'a', replacement: 'b' },
                { pattern: 'c', replacement: 'd' },
                { pattern: '(?<=x)y', replacement: 'z' },
              ],
            },
          ],
        },
        'ruleSets[1].rules[2]',
      );
      expect(issue.reason).toMatch(/lookbehind/);
    });

    it('reports every rule the engine cannot run in one set, not just the first', () => {
      const issues = issuesOf(
        withRuleSet({
          rules: [
            { pattern: 'a(?=b)', replacement: 'x' },
            { pattern: '(a)\\1', replacement: 'x' },
          ],
        }),
      );
      expect(fields(issues)).toEqual(['ruleSets[0].rules[0]', 'ruleSets[0].rules[1]']);
    });
  });

  describe('several problems', () => {
    it('are all reported at once, in document order', () => {
      const issues = issuesOf({
        routes: [
          { host: 'a b', upstream: 'ftp://x', maxBufferedBytes: -1, extra: 1 },
          route({ preserveHost: 'no' }),
        ],
        ruleSets: [
          { pathPrefix: 'blog', matchKind: 'shortest', rules: [{ pattern: '', replacement: 2 }] },
          { pathPrefix: '/', rules: [{ pattern: 'a(?=b)', replacement: 'x' }] },
        ],
        edgeWaf: 'yes',
        unknown: true,
      });
      expect(fields(issues)).toEqual([
        'unknown',
        'routes[0].extra',
        'routes[0].host',
        'routes[0].upstream',
        'routes[0].maxBufferedBytes',
        'routes[1].preserveHost',
        'ruleSets[0].pathPrefix',
        'ruleSets[0].matchKind',
        'ruleSets[0].rules[0].pattern',
        'ruleSets[0].rules[0].replacement',
        'ruleSets[1].rules[0]',
        'edgeWaf',
      ]);
    });

    it('names a repeated host by its own index when an invalid route comes before it', () => {
      const issues = issuesOf({
        routes: [{ host: 'a b', upstream: UPSTREAM }, route(), route()],
      });
      expect(issues).toContainEqual({ field: 'routes[2].host', reason: 'repeats routes[1].host' });
    });

    it('names a repeated pathPrefix by its own index when an invalid rule set comes before it', () => {
      const issues = issuesOf({
        ruleSets: [
          { pathPrefix: '/', rules: [{ pattern: 'a(?=b)', replacement: 'x' }] },
          { pathPrefix: '/blog', rules: [] },
          { pathPrefix: '/blog', rules: [] },
        ],
      });
      expect(issues).toContainEqual({
        field: 'ruleSets[2].pathPrefix',
        reason: 'repeats ruleSets[1].pathPrefix',
      });
    });
  });
});

describe('describeProxyConfigIssues', () => {
  const issues: ProxyConfigIssue[] = [
    { field: '', reason: 'must be an object' },
    { field: 'routes[0].upstream', reason: 'must not carry credentials' },
    { field: 'edgeWaf', reason: 'must be true or false' },
  ];

  it('joins issues as "field: reason" lines with "; " (a document issue is its reason alone)', () => {
    expect(describeProxyConfigIssues(issues)).toBe(
      'must be an object; routes[0].upstream: must not carry credentials; edgeWaf: must be true or false',
    );
  });

  it('says how many more there are past max', () => {
    expect(describeProxyConfigIssues(issues, 1)).toBe('must be an object; ... and 2 more');
    expect(describeProxyConfigIssues(issues, 3)).not.toMatch(/more/);
  });

  it('shows at most five issues by default', () => {
    const many = Array.from({ length: 8 }, (_, i) => ({
      field: `routes[${i}].host`,
      reason: 'bad',
    }));
    const text = describeProxyConfigIssues(many);
    expect(text.split('; ')).toHaveLength(6);
    expect(text).toMatch(/routes\[4\]\.host: bad; \.\.\. and 3 more$/);
  });

  it('describes a real refusal', () => {
    const result = parseProxyConfig(withRoute({ upstream: 'http://u:p@x' }));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(describeProxyConfigIssues(result.issues)).toBe(
        'routes[0].upstream: must not carry credentials',
      );
    }
  });
});

describe('parseProxyConfig properties', () => {
  const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?$/);
  const host = fc
    .tuple(
      fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.')),
      fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
    )
    .map(([name, port]) => (port === undefined ? name : `${name}:${port}`))
    .chain((h) => fc.mixedCase(fc.constant(h)));
  const upstream = fc
    .tuple(
      fc.constantFrom('http', 'https', 'HTTP'),
      fc.integer({ min: 1, max: 65535 }),
      fc.constantFrom('', '/'),
    )
    .map(([scheme, port, slash]) => `${scheme}://127.0.0.1:${port}${slash}`);
  const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  const routeArb = fc.record(
    {
      host,
      upstream,
      contentTypes: fc.array(
        fc.constantFrom('text/html', 'TEXT/CSS', 'application/json', 'text/*', '*'),
        { maxLength: 3 },
      ),
      maxBufferedBytes: fc.integer({ min: 0, max: MAX_PROXY_BUFFERED_BYTES }),
      keepLastModified: fc.boolean(),
      preserveHost: fc.boolean(),
    },
    { requiredKeys: ['host', 'upstream'] },
  );
  /** Printable ASCII with everything but letters and digits escaped: always a literal. */
  const literalPattern = fc
    .string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 12,
    })
    .map((s) => s.replace(/[^A-Za-z0-9]/g, (c) => `\\${c}`));
  const ruleArb = fc.record(
    {
      pattern: literalPattern,
      replacement: fc.string({ maxLength: 12 }).filter((s) => !s.includes('$')),
      flags: fc.constantFrom('', 'g', 'i', 'gi', 'ig'),
    },
    { requiredKeys: ['pattern', 'replacement'] },
  );
  const pathPrefix = fc.stringMatching(/^[a-z0-9/_.-]{0,10}$/).map((p) => `/${p}`);
  const ruleSetArb = fc.record(
    {
      pathPrefix,
      matchKind: fc.constantFrom('leftmost-first', 'leftmost-longest'),
      rules: fc.array(ruleArb, { maxLength: 4 }),
    },
    { requiredKeys: ['pathPrefix', 'rules'] },
  );
  const document = fc.record(
    {
      routes: fc.uniqueArray(routeArb, { maxLength: 4, selector: (r) => r.host.toLowerCase() }),
      ruleSets: fc.uniqueArray(ruleSetArb, { maxLength: 4, selector: (s) => s.pathPrefix }),
      edgeWaf: optional(fc.boolean()).map((b) => b ?? false),
    },
    { requiredKeys: [] },
  );

  it('accepts any valid configuration, and parsing its own output again gives the same config', () => {
    fc.assert(
      fc.property(document, (json) => {
        const first = parseProxyConfig(json);
        if (!first.ok) throw new Error(describeProxyConfigIssues(first.issues));
        const second = parseProxyConfig(JSON.parse(JSON.stringify(first.config)));
        expect(second).toEqual(first);
        expect(first.config.routes).toHaveLength(json.routes?.length ?? 0);
        expect(first.config.ruleSets).toHaveLength(json.ruleSets?.length ?? 0);
      }),
    );
  });

  it('never throws on arbitrary JSON, and always answers ok or a non-empty list of issues', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (json) => {
        const result = parseProxyConfig(json);
        if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
      }),
    );
  });

  it('never throws on arbitrary JSON in the shape of a configuration', () => {
    const anything = fc.jsonValue({ maxDepth: 2 });
    const shaped = fc.record(
      {
        routes: fc.array(
          fc.dictionary(
            fc.constantFrom('host', 'upstream', 'contentTypes', 'maxBufferedBytes', 'preserveHost'),
            anything,
          ),
          { maxLength: 3 },
        ),
        ruleSets: fc.array(
          fc.record({
            pathPrefix: fc.oneof(pathPrefix, anything),
            rules: fc.array(
              fc.record({
                pattern: fc.oneof(fc.string({ maxLength: 8 }), anything),
                replacement: fc.oneof(fc.string({ maxLength: 8 }), anything),
                flags: fc.oneof(fc.constantFrom('', 'g', 'gi', 'q'), anything),
              }),
              { maxLength: 3 },
            ),
          }),
          { maxLength: 3 },
        ),
        edgeWaf: anything,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(shaped, (json) => {
        const result = parseProxyConfig(json);
        if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
      }),
    );
  });
});
