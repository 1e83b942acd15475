/**
 * The proxy configuration's JSON Schema against its parser: documents valid per the schema are
 * accepted (with values whose meaning the schema cannot check drawn valid: compiling patterns,
 * unique hosts and prefixes), what the parser returns satisfies the normalised schema, and a
 * document broken in one field is refused by both.
 */
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseProxyConfig } from './proxy-config.js';
import { proxyConfigSchema } from './proxy-config-schema.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const accepts = ajv.compile(proxyConfigSchema());
const describesOutput = ajv.compile(proxyConfigSchema(true));

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
const host = fc
  .tuple(
    fc.array(label, { minLength: 1, maxLength: 3 }),
    fc.option(fc.integer({ min: 1, max: 65535 })),
  )
  .map(([labels, port]) => `${labels.join('.')}${port === null ? '' : `:${port}`}`);
const origin = fc
  .tuple(fc.constantFrom('http', 'https'), label, fc.option(fc.integer({ min: 1, max: 65535 })))
  .map(([scheme, name, port]) => `${scheme}://${name}.test${port === null ? '' : `:${port}`}`);
const route = fc.record(
  {
    host,
    upstream: origin,
    contentTypes: fc.array(fc.constantFrom('text/html', 'application/xhtml+xml', 'text/*', '*'), {
      maxLength: 3,
    }),
    maxBufferedBytes: fc.integer({ min: 0, max: 1 << 20 }),
    keepLastModified: fc.boolean(),
    preserveHost: fc.boolean(),
  },
  { requiredKeys: ['host', 'upstream'] },
);
const rule = fc.record(
  {
    pattern: fc.constantFrom('Shop', 'UA-\\d+-\\d+', '<a href="http://', '[Aa]nalytics', 'a|b'),
    replacement: fc.string({ maxLength: 20 }).map((s) => s.replaceAll('$', () => '$$')),
    flags: fc.constantFrom('', 'g', 'i', 'gi', 'ig'),
  },
  { requiredKeys: ['pattern', 'replacement'] },
);
const ruleSet = fc.record(
  {
    pathPrefix: fc.webPath().map((p) => `/${p.replace(/^\/+/, '').replace(/[?#\s]/g, '')}`),
    matchKind: fc.constantFrom('leftmost-first', 'leftmost-longest'),
    rules: fc.array(rule, { maxLength: 4 }),
  },
  { requiredKeys: ['pathPrefix'] },
);
const document = fc.record(
  {
    routes: fc.uniqueArray(route, { maxLength: 4, selector: (r) => r.host }),
    ruleSets: fc.uniqueArray(ruleSet, { maxLength: 4, selector: (s) => s.pathPrefix }),
    edgeWaf: fc.boolean(),
  },
  { requiredKeys: [] },
);

describe('proxyConfigSchema', () => {
  it('describes documents the parser accepts, and what the parser returns', () => {
    fc.assert(
      fc.property(document, (doc) => {
        expect(accepts(doc), JSON.stringify(accepts.errors)).toBe(true);
        const parsed = parseProxyConfig(doc);
        expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
        if (parsed.ok) {
          expect(describesOutput(parsed.config), JSON.stringify(describesOutput.errors)).toBe(true);
        }
      }),
    );
  });

  const breakages: readonly [string, (doc: Record<string, unknown>) => void][] = [
    ['an unknown field', (d) => Object.assign(d, { extra: 1 })],
    ['routes not a list', (d) => Object.assign(d, { routes: {} })],
    ['a route without upstream', (d) => Object.assign(d, { routes: [{ host: 'a.test' }] })],
    [
      'an upstream with a path',
      (d) => Object.assign(d, { routes: [{ host: 'a.test', upstream: 'http://o.test/app' }] }),
    ],
    [
      'an upstream of another scheme',
      (d) => Object.assign(d, { routes: [{ host: 'a.test', upstream: 'ftp://o.test' }] }),
    ],
    [
      'a host with a path',
      (d) => Object.assign(d, { routes: [{ host: 'a.test/x', upstream: 'http://o.test' }] }),
    ],
    [
      'a negative maxBufferedBytes',
      (d) =>
        Object.assign(d, {
          routes: [{ host: 'a.test', upstream: 'http://o.test', maxBufferedBytes: -1 }],
        }),
    ],
    ['a prefix without /', (d) => Object.assign(d, { ruleSets: [{ pathPrefix: 'x' }] })],
    [
      'an empty pattern',
      (d) =>
        Object.assign(d, {
          ruleSets: [{ pathPrefix: '/', rules: [{ pattern: '', replacement: '' }] }],
        }),
    ],
    [
      'unknown flags',
      (d) =>
        Object.assign(d, {
          ruleSets: [{ pathPrefix: '/', rules: [{ pattern: 'a', replacement: 'b', flags: 'm' }] }],
        }),
    ],
    ['edgeWaf not a boolean', (d) => Object.assign(d, { edgeWaf: 'yes' })],
    [
      'a replacement past its length limit',
      (d) =>
        Object.assign(d, {
          ruleSets: [
            { pathPrefix: '/', rules: [{ pattern: 'a', replacement: 'b'.repeat(65_537) }] },
          ],
        }),
    ],
    [
      'a path prefix past its length limit',
      (d) => Object.assign(d, { ruleSets: [{ pathPrefix: `/${'p'.repeat(2048)}` }] }),
    ],
  ];
  for (const [what, breakIt] of breakages) {
    it(`is refused by both with ${what}`, () => {
      fc.assert(
        fc.property(document, (doc) => {
          const broken: Record<string, unknown> = structuredClone(doc);
          breakIt(broken);
          expect(accepts(broken)).toBe(false);
          expect(parseProxyConfig(broken).ok).toBe(false);
        }),
        { numRuns: 20 },
      );
    });
  }

  it('leaves to the parser only what JSON Schema cannot state: patterns that do not compile', () => {
    const doc = {
      ruleSets: [{ pathPrefix: '/', rules: [{ pattern: '(?<=a)b', replacement: '' }] }],
    };
    expect(accepts(doc)).toBe(true);
    const parsed = parseProxyConfig(doc);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]?.field).toBe('ruleSets[0].rules[0]');
  });
});
