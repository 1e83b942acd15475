/**
 * Prexy's per-site configuration through the real hub, Redis and each database: set, read back
 * normalised, refused whole with every bad field named (a rule the engine cannot compile by its
 * rule, position and construct), carried by the site's next snapshot next to its WAF rules, and
 * removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, withSnapshot } from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';

afterAll(() => stopPostgres());

const CONFIG = {
  routes: [{ host: 'shop.example', upstream: 'http://127.0.0.1:3000', keepLastModified: true }],
  ruleSets: [
    { pathPrefix: '/', rules: [{ pattern: 'UA-\\d+-\\d+', replacement: 'UA-0-0', flags: 'g' }] },
    { pathPrefix: '/blog/', matchKind: 'leftmost-longest', rules: [] },
  ],
  edgeWaf: true,
};

interface Issue {
  field: string;
  reason: string;
}

describe.each(DATABASE_KINDS)('prexy configuration on %s', (kind) => {
  let stack: HubStack;
  let key: string;
  const c = () => stack.client;

  beforeAll(async () => {
    stack = await startStack(kind);
    ({ key } = await c().createSite('Shop', 'shop'));
    const rule = await c().admin('POST', '/v1/sites/shop/rules', {
      id: 'wp',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    });
    expect(rule.status, rule.text).toBe(201);
  });
  afterAll(() => stack?.stop());

  /** The snapshot the site serves once its every change is built. */
  const builtSnapshot = async () => {
    await waitFor('the site to settle', async () => {
      const site = await c().getSite('shop');
      return site.builtRevision === site.rulesRevision ? site : undefined;
    });
    const response = await c().site(key, '/v1/snapshot', {
      headers: { 'accept-encoding': 'identity' },
    });
    expect(response.status).toBe(200);
    return withSnapshot(response.bytes, (s) => ({
      proxyConfig: s.proxyConfig,
      ruleIds: s.rules.map((r) => r.id),
      version: s.version,
    }));
  };

  it('has none until one is set, and snapshots carry none', async () => {
    const empty = await c().admin('GET', '/v1/sites/shop/proxy');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ routes: [], ruleSets: [], edgeWaf: false });
    expect((await builtSnapshot()).proxyConfig).toBeNull();
  });

  it('stores a configuration with its defaults filled in, and the next snapshot carries it', async () => {
    const before = await builtSnapshot();
    const put = await c().admin('PUT', '/v1/sites/shop/proxy', CONFIG);
    expect(put.status, put.text).toBe(200);
    const expected = {
      routes: [
        {
          host: 'shop.example',
          upstream: 'http://127.0.0.1:3000',
          contentTypes: ['text/html'],
          maxBufferedBytes: 8192,
          keepLastModified: true,
          preserveHost: false,
        },
      ],
      ruleSets: [
        {
          pathPrefix: '/',
          matchKind: 'leftmost-first',
          rules: [{ pattern: 'UA-\\d+-\\d+', replacement: 'UA-0-0', flags: 'g' }],
        },
        { pathPrefix: '/blog/', matchKind: 'leftmost-longest', rules: [] },
      ],
      edgeWaf: true,
    };
    expect(put.body).toEqual(expected);
    expect((await c().admin('GET', '/v1/sites/shop/proxy')).body).toEqual(expected);
    const after = await waitFor('a snapshot with the configuration', async () => {
      const s = await builtSnapshot();
      return s.version > before.version ? s : undefined;
    });
    expect(after.proxyConfig).toEqual(expected);
    expect(after.ruleIds).toEqual(['wp']); // the WAF rules travel beside it, unchanged
  });

  it('refuses a rule that does not compile, naming the rule, position and construct; nothing changes', async () => {
    const revision = (await c().getSite('shop')).rulesRevision;
    const bad = await c().admin<{ issues: Issue[]; detail: string }>(
      'PUT',
      '/v1/sites/shop/proxy',
      {
        ...CONFIG,
        ruleSets: [
          {
            pathPrefix: '/',
            rules: [
              { pattern: 'ok', replacement: 'fine' },
              { pattern: '(?<=a)b', replacement: '' },
            ],
          },
        ],
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(bad.body.issues).toHaveLength(1);
    expect(bad.body.issues[0]?.field).toBe('ruleSets[0].rules[1]');
    expect(bad.body.issues[0]?.reason).toMatch(/^"\(\?<=a\)b": position \d+: .*look/i);
    expect((await c().getSite('shop')).rulesRevision).toBe(revision);
    expect((await c().admin<typeof CONFIG>('GET', '/v1/sites/shop/proxy')).body.edgeWaf).toBe(true);
  });

  it('names every bad field of a document at once', async () => {
    const bad = await c().admin<{ issues: Issue[] }>('PUT', '/v1/sites/shop/proxy', {
      routes: [
        { host: 'a.example', upstream: 'ftp://files.example' },
        { host: 'a.example', upstream: 'http://127.0.0.1:1/app' },
      ],
      ruleSets: [{ pathPrefix: 'blog', rules: [{ pattern: 'x', replacement: 'trailing $' }] }],
      mirror: true,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.issues.map((i) => i.field).sort()).toEqual(
      ['mirror', 'routes[0].upstream', 'routes[1].upstream', 'ruleSets[0].pathPrefix'].sort(),
    );
  });

  it('answers 404 for an unknown site and 400 for a body that is not JSON', async () => {
    expect((await c().admin('GET', '/v1/sites/nowhere/proxy')).status).toBe(404);
    expect((await c().admin('PUT', '/v1/sites/nowhere/proxy', CONFIG)).status).toBe(404);
    const garbled = await c().admin('PUT', '/v1/sites/shop/proxy', undefined, {
      raw: '{"routes": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(garbled.status).toBe(400);
  });

  it('removes the configuration; the next snapshot carries none', async () => {
    const before = await builtSnapshot();
    expect((await c().admin('DELETE', '/v1/sites/shop/proxy')).status).toBe(204);
    expect((await c().admin('GET', '/v1/sites/shop/proxy')).body).toEqual({
      routes: [],
      ruleSets: [],
      edgeWaf: false,
    });
    const after = await waitFor('a snapshot without the configuration', async () => {
      const s = await builtSnapshot();
      return s.version > before.version ? s : undefined;
    });
    expect(after.proxyConfig).toBeNull();
  });
});
