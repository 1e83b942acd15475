/**
 * The management API against the real hub, real Redis and each database: sites and keys, the
 * two kinds of credentials, rules CRUD / bulk import and export with rules-core validation,
 * range dataset uploads (streamed, size-limited), malformed input, readiness and OpenAPI.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SiteView, waitFor } from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';

const MAX_JSON_BYTES = 16 * 1024;
const MAX_UPLOAD_BYTES = 6 * 1024 * 1024;

afterAll(() => stopPostgres());

const wp = {
  id: 'wp',
  type: 'pattern',
  action: 'block',
  when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
};
const office = { id: 'office', type: 'ip', action: 'allow', ranges: ['203.0.113.0/24'] };

/** An RFC 9457 problem, as the hub answers every error. */
interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  issues?: { field: string; reason: string; [extension: string]: unknown }[];
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

describe.each(DATABASE_KINDS)('hub management API on %s', (kind) => {
  let stack: HubStack;
  const c = () => stack.client;

  beforeAll(async () => {
    stack = await startStack(kind, {
      env: {
        HUB_TRUST_PROXY: 'true', // tests pick their client address per test (X-Forwarded-For)
        HUB_MAX_JSON_BYTES: String(MAX_JSON_BYTES),
        HUB_MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
        HUB_LOG_LEVEL: 'debug', // the most verbose logs must not leak secrets either
      },
    });
  });
  afterAll(() => stack?.stop());

  const site = async (id: string) => (await c().getSite(id)) as SiteView;

  it('serves OpenAPI at /docs with every path and the DTO schemas', async () => {
    const html = await fetch(`${stack.hub.url}/docs`);
    expect(html.status).toBe(200);
    expect(await html.text()).toMatch(/swagger/i);
    const { status, body } = await c().admin<{
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: object; required?: string[] }> };
    }>('GET', '/docs/openapi.json', undefined, { token: null });
    expect(status).toBe(200);
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/sites',
        '/v1/sites/{siteId}',
        '/v1/sites/{siteId}/keys',
        '/v1/sites/{siteId}/keys/rotate',
        '/v1/sites/{siteId}/keys/{keyId}',
        '/v1/sites/{siteId}/rules',
        '/v1/sites/{siteId}/rules/{ruleId}',
        '/v1/sites/{siteId}/rules/import',
        '/v1/sites/{siteId}/rules/export',
        '/v1/datasets',
        '/v1/datasets/{kind}/{name}',
        '/v1/sites/{siteId}/builds',
        '/v1/sites/{siteId}/snapshots',
        '/v1/sites/{siteId}/instances',
        '/v1/snapshot',
        '/v1/snapshots/{sha256}',
        '/v1/metrics',
        '/health/live',
        '/health/ready',
      ]),
    );
    expect(Object.keys(body.paths['/v1/sites/{siteId}/rules/{ruleId}'] ?? {})).toEqual(
      expect.arrayContaining(['get', 'put', 'delete']),
    );
    const schemas = body.components.schemas;
    for (const name of [
      'CreateSiteDto',
      'RotateKeyDto',
      'SiteView',
      'CreatedSiteView',
      'IssuedKeyView',
      'KeyView',
      'Rule',
      'RuleSet',
      'RuleListView',
      'ReportBatch',
      'MetricsView',
      'ProblemDetails',
    ]) {
      expect(schemas[name], name).toBeDefined();
    }
    // Every guarded operation declares its 401, and every error is a problem.
    for (const [path, operations] of Object.entries(body.paths)) {
      for (const [method, operation] of Object.entries(operations) as [
        string,
        { security?: unknown[]; responses: Record<string, { content?: object }> },
      ][]) {
        if (operation.security)
          expect(operation.responses, `${method} ${path}`).toHaveProperty('401');
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) >= 400)
            expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual([
              'application/problem+json',
            ]);
        }
      }
    }
    expect(schemas.Rule).toHaveProperty('oneOf');
    // Rotation takes no body, or one.
    const rotate = body.paths['/v1/sites/{siteId}/keys/rotate']?.post as {
      requestBody: { required: boolean };
    };
    expect(rotate.requestBody.required).toBe(false);
    expect(schemas.CreateSiteDto?.properties).toHaveProperty('name');
    expect(schemas.CreateSiteDto?.required).toEqual(['name']);
    expect(schemas.SiteView?.properties).toHaveProperty('rulesRevision');
  });

  it('reports readiness of the database and Redis', async () => {
    const { status, body } = await c().admin<{
      status: string;
      details: Record<string, { status: string; dialect?: string }>;
    }>('GET', '/health/ready', undefined, { token: null });
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.details.database).toEqual({ status: 'up', dialect: kind });
    expect(body.details.redis).toEqual({ status: 'up' });
  });

  describe('sites and credentials', () => {
    it('creates, lists and reads sites; the key is shown once', async () => {
      const created = await c().admin<{
        site: SiteView;
        credentials: { keyId: string; key: string };
      }>('POST', '/v1/sites', { name: 'Shop', id: 'shop' });
      expect(created.status).toBe(201);
      expect(created.body.site).toMatchObject({
        id: 'shop',
        name: 'Shop',
        rulesRevision: 0,
        builtRevision: 0,
        currentVersion: null,
      });
      const { keyId, key } = created.body.credentials;
      expect(key).toMatch(new RegExp(`^rk_${keyId}_[A-Za-z0-9_-]{43}$`));

      const generated = await c().createSite('Blog');
      expect(generated.site.id).toMatch(/^site-[0-9a-f]{12}$/);

      const list = await c().admin<SiteView[]>('GET', '/v1/sites');
      expect(list.status).toBe(200);
      expect(list.body.map((s) => s.id)).toEqual(
        expect.arrayContaining(['shop', generated.site.id]),
      );
      expect((await site('shop')).name).toBe('Shop');
      const keys = await c().admin<unknown[]>('GET', '/v1/sites/shop/keys');
      expect(keys.body).toEqual([{ keyId, createdAt: expect.any(String), revokedAt: null }]);
    });

    it('stores site keys only as SHA-256 hashes', async () => {
      const { key } = await c().createSite('Hashed', 'hashed');
      const keyId = /^rk_([0-9a-f]{16})_/.exec(key)?.[1];
      expect(
        await stack.query(
          "SELECT id, site_id, secret_hash FROM site_keys WHERE site_id = 'hashed'",
        ),
      ).toEqual([{ id: keyId, site_id: 'hashed', secret_hash: sha256(key) }]);
      // No table holds any key (or the admin token) the suite has seen.
      for (const table of ['sites', 'site_keys', 'rules', 'builds', 'instances']) {
        const rows = await stack.query(`SELECT * FROM ${table}`);
        c().expectNoSecret(`table ${table}`, JSON.stringify(rows));
      }
    });

    it('rejects a duplicate site id, a bad id, wrong types and unknown fields', async () => {
      await c().createSite('dup', 'dup-site');
      const dup = await c().admin<{ detail: string }>('POST', '/v1/sites', {
        name: 'again',
        id: 'dup-site',
      });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toContain('"dup-site" already exists');
      const racing = await Promise.all(
        [1, 2, 3].map(() => c().admin('POST', '/v1/sites', { name: 'race', id: 'race-site' })),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);

      const cases: [unknown, string, RegExp][] = [
        [{ name: 'x', id: 'Bad Id!' }, 'id', /id must be 3-64 characters/],
        [{ name: 'x', id: null }, 'id', /id must be 3-64 characters/],
        [{ name: 42 }, 'name', /name must be a string/],
        [{ name: 'x', color: 'red' }, 'color', /property color should not exist/],
        [{}, 'name', /name must be a string/],
      ];
      const before = (await c().admin<SiteView[]>('GET', '/v1/sites')).body.length;
      for (const [body, field, reason] of cases) {
        const answer = await c().admin<Problem>('POST', '/v1/sites', body);
        expect(answer.status, answer.text).toBe(400);
        expect(answer.headers.get('content-type')).toBe('application/problem+json');
        expect(answer.body).toMatchObject({
          type: 'about:blank',
          title: 'Bad Request',
          status: 400,
        });
        expect(answer.body.issues).toContainEqual({ field, reason: expect.stringMatching(reason) });
        expect(answer.body.detail).toMatch(reason);
      }
      expect((await c().admin<SiteView[]>('GET', '/v1/sites')).body.length).toBe(before);
      expect((await c().admin('GET', '/v1/sites/nope')).status).toBe(404);
    });

    it('requires the admin token on the management API', async () => {
      const from = '198.51.100.1';
      for (const token of [null, 'wrong-token', `${stack.hub.adminToken}x`]) {
        const answer = await c().admin('GET', '/v1/sites', undefined, { token, from });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('content-type')).toBe('application/problem+json');
        expect(answer.headers.get('www-authenticate')).toBe('Bearer');
        expect(answer.body).toEqual({
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          detail: 'missing or invalid credentials',
          instance: '/v1/sites',
        });
      }
      // A site key is not an admin token.
      const { key } = await c().createSite('keyed', 'keyed');
      expect((await c().admin('GET', '/v1/sites', undefined, { token: key, from })).status).toBe(
        401,
      );
      // Nor does the admin token download snapshots (each credential has one purpose).
      const snapshot = await c().site(stack.hub.adminToken, '/v1/snapshot', {
        from: '198.51.100.2',
      });
      expect(snapshot.status).toBe(401);
    });

    it('opens dashboard sessions: cookie flags, CSRF token on writes, logout', async () => {
      const from = '198.51.100.20';
      const wrong = await c().admin(
        'POST',
        '/v1/session',
        { token: 'nope' },
        { token: null, from },
      );
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
      expect(wrong.headers.get('set-cookie')).toBeNull();
      const missing = await c().admin('POST', '/v1/session', {}, { token: null, from });
      expect(missing.status).toBe(400);

      const login = await c().admin<{ csrfToken: string; expiresAt: string }>(
        'POST',
        '/v1/session',
        { token: stack.hub.adminToken },
        { token: null, from },
      );
      expect(login.status, login.text).toBe(201);
      const setCookie = login.headers.get('set-cookie') ?? '';
      const attributes = setCookie.split('; ');
      expect(attributes[0]).toMatch(/^rampart_session=[A-Za-z0-9_-]{43}$/);
      expect(attributes).toHaveLength(5);
      expect(attributes).toEqual(
        expect.arrayContaining([
          'HttpOnly',
          'Path=/',
          'SameSite=Strict',
          expect.stringMatching(/^Expires=/),
        ]),
      );
      expect(Date.parse(login.body.expiresAt) - Date.now()).toBeGreaterThan(11 * 3_600_000);
      const cookie = setCookie.split(';')[0] ?? '';
      const asSession = (csrf?: string) => ({
        token: null,
        from,
        headers: { cookie, ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) },
      });

      expect((await c().admin('GET', '/v1/sites', undefined, asSession())).status).toBe(200);
      const current = await c().admin('GET', '/v1/session', undefined, asSession());
      expect(current.body).toEqual(login.body);
      const site = { name: 'by session', id: 'by-session' };
      const forged = await c().admin('POST', '/v1/sites', site, asSession());
      expect(forged.status).toBe(403);
      expect(forged.text).toContain('CSRF');
      const wrongCsrf = await c().admin('POST', '/v1/sites', site, asSession('x'.repeat(43)));
      expect(wrongCsrf.status).toBe(403);
      expect((await c().admin('GET', '/v1/sites/by-session')).status).toBe(404);
      const made = await c().admin('POST', '/v1/sites', site, asSession(login.body.csrfToken));
      expect(made.status, made.text).toBe(201);

      // Outside loopback the cookie is Secure (behind a TLS proxy that names the host).
      const remote = await c().admin(
        'POST',
        '/v1/session',
        { token: stack.hub.adminToken },
        {
          token: null,
          from,
          headers: { 'x-forwarded-host': 'hub.example', 'x-forwarded-proto': 'https' },
        },
      );
      expect(remote.headers.get('set-cookie')?.split('; ')).toContain('Secure');

      expect((await c().admin('DELETE', '/v1/session', undefined, asSession())).status).toBe(403);
      const out = await c().admin(
        'DELETE',
        '/v1/session',
        undefined,
        asSession(login.body.csrfToken),
      );
      expect(out.status).toBe(204);
      const cleared = out.headers.get('set-cookie') ?? '';
      expect(cleared).toMatch(/^rampart_session=;/);
      expect(cleared).toContain('Expires=Thu, 01 Jan 1970');
      expect((await c().admin('GET', '/v1/sites', undefined, asSession())).status).toBe(401);
      // A bearer token is not a session.
      expect((await c().admin('GET', '/v1/session')).status).toBe(401);
    });

    it('rotates keys: revoking by default, or keeping old keys until deleted', async () => {
      const { key: first } = await c().createSite('rotating', 'rotating');
      // No snapshot yet: an authenticated request gets 404, an unauthenticated one 401.
      expect((await c().site(first)).status).toBe(404);

      const rotated = await c().admin<{ keyId: string; key: string }>(
        'POST',
        '/v1/sites/rotating/keys/rotate', // no body: revokes the others, the default
      );
      expect(rotated.status).toBe(201);
      const second = rotated.body.key;
      const from = '198.51.100.3';
      expect((await c().site(first, '/v1/snapshot', { from })).status).toBe(401);
      expect((await c().site(second, '/v1/snapshot', { from })).status).toBe(404);

      const kept = await c().admin<{ keyId: string; key: string }>(
        'POST',
        '/v1/sites/rotating/keys/rotate',
        { revokeExisting: false },
      );
      expect(kept.status).toBe(201);
      const third = kept.body.key;
      expect((await c().site(second, '/v1/snapshot', { from })).status).toBe(404);
      expect((await c().site(third, '/v1/snapshot', { from })).status).toBe(404);

      const secondId = rotated.body.keyId;
      expect((await c().admin('DELETE', `/v1/sites/rotating/keys/${secondId}`)).status).toBe(204);
      expect((await c().admin('DELETE', `/v1/sites/rotating/keys/${secondId}`)).status).toBe(404);
      expect((await c().site(second, '/v1/snapshot', { from })).status).toBe(401);
      expect((await c().site(third, '/v1/snapshot', { from })).status).toBe(404);

      const keys = await c().admin<{ keyId: string; revokedAt: string | null }[]>(
        'GET',
        '/v1/sites/rotating/keys',
      );
      expect(keys.body.filter((k) => k.revokedAt === null).map((k) => k.keyId)).toEqual([
        kept.body.keyId,
      ]);
      expect(
        (await c().admin('POST', '/v1/sites/rotating/keys/rotate', { revokeExisting: 'no' }))
          .status,
      ).toBe(400);
    });

    it('answers every unknown, malformed or revoked key with the same 401', async () => {
      const { key } = await c().createSite('secretive', 'secretive');
      const keyId = /^rk_([0-9a-f]{16})_/.exec(key)?.[1] ?? '';
      const rotated = await c().admin('POST', '/v1/sites/secretive/keys/rotate', {});
      expect(rotated.status).toBe(201);
      const wrongSecret = `rk_${keyId}_${'A'.repeat(43)}`;
      const unknownId = `rk_${'0'.repeat(16)}_${'A'.repeat(43)}`;
      const attempts = {
        missing: await c().site(null, '/v1/snapshot', { from: '198.51.100.10' }),
        malformed: await c().site('not-a-key', '/v1/snapshot', { from: '198.51.100.10' }),
        unknownSite: await c().site(unknownId, '/v1/snapshot', { from: '198.51.100.10' }),
        wrongSecret: await c().site(wrongSecret, '/v1/snapshot', { from: '198.51.100.10' }),
        revoked: await c().site(key, '/v1/snapshot', { from: '198.51.100.10' }),
        inQuery: await c().site(null, `/v1/snapshot?key=${key}`, { from: '198.51.100.11' }),
      };
      const bodies = new Set(Object.values(attempts).map((a) => a.bytes.toString()));
      expect(Object.values(attempts).map((a) => a.status)).toEqual(Array(6).fill(401));
      expect([...bodies]).toEqual([
        JSON.stringify({
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          detail: 'missing or invalid credentials',
          instance: '/v1/snapshot',
        }),
      ]);
    });

    it('slows down repeated failures from one address, not other addresses', async () => {
      const bad = `rk_${'1'.repeat(16)}_${'B'.repeat(43)}`;
      const timed = async (from: string) => {
        const started = performance.now();
        const answer = await c().site(bad, '/v1/snapshot', { from });
        expect(answer.status).toBe(401);
        return performance.now() - started;
      };
      const slowed = '198.51.100.66';
      const times: number[] = [];
      for (let i = 0; i < 9; i++) times.push(await timed(slowed));
      // Five free failures, then 100, 200, 400 and 800 ms before each answer.
      expect(times[5]).toBeGreaterThanOrEqual(95);
      expect(times[6]).toBeGreaterThanOrEqual(195);
      expect(times[7]).toBeGreaterThanOrEqual(395);
      expect(times[8]).toBeGreaterThanOrEqual(795);
      const other = await timed('198.51.100.67');
      expect(other).toBeLessThan(times[8] ?? 0);
      // A legitimate request from the slowed address is not held back.
      const started = performance.now();
      expect((await c().admin('GET', '/v1/sites', undefined, { from: slowed })).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(times[8] ?? 0);
    });
  });

  describe('rules', () => {
    const rules = (siteId: string) =>
      c().admin<{ revision: number; rules: { id: string }[] }>('GET', `/v1/sites/${siteId}/rules`);

    beforeAll(async () => {
      await c().createSite('Rules', 'rules');
    });

    it('creates, reads, replaces and deletes rules; each change bumps the revision', async () => {
      expect((await rules('rules')).body).toEqual({ revision: 0, rules: [] });

      const created = await c().admin('POST', '/v1/sites/rules/rules', wp);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ ...wp, mode: 'enforce' }); // normalised by rules-core
      expect((await site('rules')).rulesRevision).toBe(1);

      expect((await c().admin('POST', '/v1/sites/rules/rules', office)).status).toBe(201);
      expect((await site('rules')).rulesRevision).toBe(2);
      expect((await c().admin('GET', '/v1/sites/rules/rules/office')).body).toEqual({
        ...office,
        mode: 'enforce',
      });
      expect((await c().admin('GET', '/v1/sites/rules/rules/none')).status).toBe(404);

      const replaced = await c().admin('PUT', '/v1/sites/rules/rules/office', {
        type: 'ip',
        action: 'block',
        ranges: ['2001:db8::/32'],
        mode: 'monitor',
        note: 'watch only',
      });
      expect(replaced.status, replaced.text).toBe(200);
      expect(replaced.body).toMatchObject({ id: 'office', action: 'block', mode: 'monitor' });
      expect((await site('rules')).rulesRevision).toBe(3);

      const mismatch = await c().admin<{ detail: string }>('PUT', '/v1/sites/rules/rules/office', {
        ...office,
        id: 'other',
      });
      expect(mismatch.status).toBe(422);
      expect(mismatch.body.detail).toContain('id: must match the rule id in the path');
      const { id: _, ...withoutId } = office;
      expect((await c().admin('PUT', '/v1/sites/rules/rules/none', withoutId)).status).toBe(404);

      expect((await c().admin('DELETE', '/v1/sites/rules/rules/office')).status).toBe(204);
      expect((await c().admin('DELETE', '/v1/sites/rules/rules/office')).status).toBe(404);
      expect(await rules('rules').then((r) => r.body)).toEqual({
        revision: 4,
        rules: [{ ...wp, mode: 'enforce' }],
      });
      expect((await c().admin('GET', '/v1/sites/nope/rules')).status).toBe(404);
      expect((await c().admin('POST', '/v1/sites/nope/rules', wp)).status).toBe(404);
    });

    it('exports and imports rule sets (replace and append) as one change each', async () => {
      const exported = await c().admin<{ rules: unknown[] }>('GET', '/v1/sites/rules/rules/export');
      expect(exported.status).toBe(200);
      expect(exported.body).toEqual({ rules: [{ ...wp, mode: 'enforce' }] });

      await c().createSite('Copy', 'copy');
      const imported = await c().admin<{ revision: number; rules: unknown[] }>(
        'POST',
        '/v1/sites/copy/rules/import',
        exported.body,
      );
      expect(imported.status, imported.text).toBe(200);
      expect(imported.body).toEqual({ revision: 1, rules: exported.body.rules });

      const appended = await c().admin<{ revision: number; rules: { id: string }[] }>(
        'POST',
        '/v1/sites/copy/rules/import?mode=append',
        { rules: [office, { ...office, id: 'office-2', ranges: ['198.51.100.0/24'] }] },
      );
      expect(appended.status, appended.text).toBe(200);
      expect(appended.body.revision).toBe(2);
      expect(appended.body.rules.map((r) => r.id)).toEqual(['wp', 'office', 'office-2']);

      const replaced = await c().admin<{ revision: number; rules: { id: string }[] }>(
        'POST',
        '/v1/sites/copy/rules/import?mode=replace',
        { rules: [office] },
      );
      expect(replaced.body.revision).toBe(3);
      expect(replaced.body.rules.map((r) => r.id)).toEqual(['office']);

      const emptied = await c().admin('POST', '/v1/sites/copy/rules/import', { rules: [] });
      expect(emptied.body).toEqual({ revision: 4, rules: [] });
      const mode = await c().admin<{ detail: string }>(
        'POST',
        '/v1/sites/copy/rules/import?mode=merge',
        { rules: [] },
      );
      expect(mode.status).toBe(400);
      expect(mode.body.detail).toContain('mode must be "replace" or "append"');
    });

    it('rejects invalid rules naming index, field and reason, and writes nothing', async () => {
      const before = await rules('rules');
      const expectUnchanged = async () => expect((await rules('rules')).body).toEqual(before.body);

      const bulk = await c().admin<{
        detail: string;
        issues: { index: number; ruleId?: string; field: string; reason: string }[];
      }>('POST', '/v1/sites/rules/rules/import', {
        rules: [
          office,
          { ...office, id: 'bad-cidr', ranges: ['10.0.0.300/8'] },
          { ...office, id: 'host-bits', ranges: ['10.0.0.1/8'] },
          { ...wp, id: 'office' },
          { ...wp, id: 'typo', colour: 'red' },
          { ...wp, id: 'typed', when: 'path' },
        ],
      });
      expect(bulk.status).toBe(422);
      expect(bulk.body.detail).toMatch(
        /^rules\[1\] \(id "bad-cidr"\): ranges\[0\]: .+ \(and 4 more\)$/,
      );
      const where = bulk.body.issues.map((i) => `${i.index}:${i.field}`);
      expect(where).toEqual(['1:ranges[0]', '2:ranges[0]', '3:id', '4:colour', '5:when']);
      expect(bulk.body.issues[1]?.reason).toMatch(/host bits/);
      expect(bulk.body.issues[2]).toMatchObject({
        ruleId: 'office',
        reason: 'duplicates the id of rules[0]',
      });
      expect(bulk.body.issues[3]?.reason).toBe('is not a known field');
      await expectUnchanged();

      // One bad rule in an append fails the whole append.
      const append = await c().admin('POST', '/v1/sites/rules/rules/import?mode=append', {
        rules: [office, { id: 'x', type: 'country', action: 'block', countries: ['Germany'] }],
      });
      expect(append.status).toBe(422);
      expect(append.text).toContain('countries[0]');
      await expectUnchanged();

      // A single rule duplicating an existing id, and a reputation list nobody uploaded.
      const duplicate = await c().admin<{ detail: string }>('POST', '/v1/sites/rules/rules', wp);
      expect(duplicate.status).toBe(422);
      expect(duplicate.body.detail).toBe('rules[1] (id "wp"): id: duplicates the id of rules[0]');
      const missingList = await c().admin<{ detail: string }>('POST', '/v1/sites/rules/rules', {
        id: 'drop',
        type: 'reputation',
        action: 'block',
        lists: ['never-uploaded'],
      });
      expect(missingList.status).toBe(422);
      expect(missingList.body.detail).toMatch(
        /lists\[0\]: no reputation dataset named "never-uploaded"/,
      );
      // Ids of automatic blocks are the detectors' own.
      const reserved = await c().admin<{ detail: string }>('POST', '/v1/sites/rules/rules', {
        ...office,
        id: 'auto:mine',
      });
      expect(reserved.status).toBe(422);
      expect(reserved.body.detail).toMatch(/\(id "auto:mine"\): id: must not start with "auto:"/);
      await expectUnchanged();
    });

    it('rejects malformed JSON, other media types, bad shapes and oversized bodies', async () => {
      const before = await rules('rules');
      const malformed = await c().admin<{ detail: string }>(
        'POST',
        '/v1/sites/rules/rules',
        undefined,
        { raw: '{"id": "x", "type": ' },
      );
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail).toMatch(/JSON/);

      const text = await c().admin<{ detail: string }>('POST', '/v1/sites/rules/rules', undefined, {
        raw: 'id=x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      expect(text.body.detail).toBe('request bodies must be application/json');

      const notAnObject = await c().admin<{ detail: string }>('POST', '/v1/sites/rules/rules', [
        wp,
      ]);
      expect(notAnObject.status).toBe(422);
      expect(notAnObject.body.detail).toBe(
        `rules[${before.body.rules.length}]: (rule): must be an object`,
      );

      const notArray = await c().admin<Problem>('POST', '/v1/sites/rules/rules/import', {
        rules: 'wp',
      });
      expect(notArray.status).toBe(400);
      expect(notArray.body.issues).toEqual([{ field: 'rules', reason: 'rules must be an array' }]);
      const extra = await c().admin<Problem>('POST', '/v1/sites/rules/rules/import', {
        rules: [],
        version: 2,
      });
      expect(extra.status).toBe(400);
      expect(extra.body.issues).toEqual([
        { field: 'version', reason: 'property version should not exist' },
      ]);

      const many = Array.from({ length: 400 }, (_, i) => ({ ...office, id: `office-${i}` }));
      const payload = JSON.stringify({ rules: many });
      expect(payload.length).toBeGreaterThan(MAX_JSON_BYTES);
      const tooLarge = await c().admin<{ detail: string }>(
        'POST',
        '/v1/sites/rules/rules/import',
        undefined,
        { raw: payload },
      );
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body.detail).toMatch(/too large/i);
      expect((await rules('rules')).body).toEqual(before.body);
    });
  });

  describe('range datasets', () => {
    const countryCsv = '198.51.100.0,198.51.100.255,XA\n2001:db8::,2001:db8::ffff,XA\n';
    const asnCsv = '192.0.2.0,192.0.2.255,64500,"Example, Hosting"\n';
    const dropList = '# Spamhaus-style DROP list\n100.66.0.0/16 ; SBL1\n100.67.0.1\n';
    const upload = (
      kind: string,
      name: string,
      body: string | Buffer | ReadableStream<Uint8Array>,
      query = '',
      contentType = 'text/plain',
    ) =>
      c().admin<Record<string, unknown> & { detail?: string; issues?: unknown[] }>(
        'PUT',
        `/v1/datasets/${kind}/${name}${query}`,
        undefined,
        { raw: body, headers: { 'content-type': contentType } },
      );
    const datasetFiles = () => readdirSync(join(stack.hub.dataDir, 'datasets')).sort();
    // Uploads in progress (builds triggered by dataset changes have their own scratch files).
    const scratchFiles = () =>
      readdirSync(join(stack.hub.dataDir, 'tmp')).filter((f) => f.endsWith('.upload'));

    it('imports country, ASN and reputation data in the public formats', async () => {
      await c().createSite('Data', 'data');
      const revision = (await site('data')).rulesRevision;

      const country = await upload('country', 'geo', countryCsv, '', 'text/csv');
      expect(country.status, country.text).toBe(200);
      expect(country.body).toMatchObject({
        kind: 'country',
        name: 'geo',
        sha256: sha256(countryCsv),
        bytes: countryCsv.length,
        entries: 2,
        lines: 2,
        skippedLines: 0,
      });
      expect(existsSync(join(stack.hub.dataDir, 'datasets', `${sha256(countryCsv)}.txt`))).toBe(
        true,
      );
      const asn = await upload('asn', 'hosting', asnCsv);
      expect(asn.status, asn.text).toBe(200);
      expect(asn.body).toMatchObject({ kind: 'asn', entries: 1 });
      const drop = await upload('reputation', 'drop', dropList);
      expect(drop.status, drop.text).toBe(200);
      expect(drop.body).toMatchObject({ kind: 'reputation', entries: 2, lines: 3 });

      // Datasets feed every site's snapshot: each upload is a change of every site.
      expect((await site('data')).rulesRevision).toBe(revision + 3);

      const list = await c().admin<{ kind: string; name: string }[]>('GET', '/v1/datasets');
      expect(list.body.map((d) => `${d.kind}/${d.name}`)).toEqual(
        expect.arrayContaining(['asn/hosting', 'country/geo', 'reputation/drop']),
      );
      // A rule may now name the list.
      const rule = await c().admin('POST', '/v1/sites/data/rules', {
        id: 'drop',
        type: 'reputation',
        action: 'block',
        lists: ['drop'],
      });
      expect(rule.status, rule.text).toBe(201);
      const inUse = await c().admin<{ detail: string }>('DELETE', '/v1/datasets/reputation/drop');
      expect(inUse.status).toBe(409);
      expect(inUse.body.detail).toContain('data');
    });

    it('rejects bad lines (or skips them) naming file and line; a rejected upload changes nothing', async () => {
      const files = datasetFiles();
      const before = (await c().admin('GET', '/v1/datasets')).body;
      const bad = `${countryCsv}not,an,address\n198.51.100.0/33,x,XA\n`;
      const rejected = await upload('country', 'geo', bad, '?onBadLine=reject');
      expect(rejected.status).toBe(422);
      expect(rejected.body.detail).toMatch(/geo:3/);
      expect(rejected.body.issues).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: '(body)', file: 'geo', line: 3 }),
        ]),
      );
      expect((await c().admin('GET', '/v1/datasets')).body).toEqual(before);
      expect(datasetFiles()).toEqual(files);

      const skipped = await upload('country', 'geo-lenient', bad, '?onBadLine=skip');
      expect(skipped.status, skipped.text).toBe(200);
      expect(skipped.body).toMatchObject({ entries: 2, lines: 4, skippedLines: 2 });
      expect(skipped.body.issues).toHaveLength(2);

      const nothing = await upload('reputation', 'empty', '# only comments\n');
      expect(nothing.status).toBe(422);
      expect(nothing.body.detail).toContain('no usable line');

      expect((await upload('city', 'x', countryCsv)).status).toBe(400);
      expect((await upload('country', 'Bad Name', countryCsv)).status).toBe(400);
      expect((await upload('country', 'x', countryCsv, '?onBadLine=maybe')).status).toBe(400);
      const json = await upload('country', 'x', '{}', '', 'application/json');
      expect(json.status).toBe(415);
      expect(json.body.detail).toContain('Content-Type must be one of');
      expect(scratchFiles()).toEqual([]);
      expect((await c().admin('DELETE', '/v1/datasets/country/geo-lenient')).status).toBe(204);
      expect((await c().admin('DELETE', '/v1/datasets/country/geo-lenient')).status).toBe(404);
      expect(datasetFiles()).toEqual(files);
    });

    it('answers 413 beyond the upload limit, declared or streamed, and records nothing', async () => {
      const files = datasetFiles();
      const before = (await c().admin('GET', '/v1/datasets')).body;
      const line = '198.51.100.0,198.51.100.255,XA\n';
      const oversized = Buffer.from(line.repeat(Math.ceil((MAX_UPLOAD_BYTES + 1) / line.length)));

      const declared = await upload('country', 'too-big', oversized);
      expect(declared.status).toBe(413);
      expect(declared.body.detail).toBe(
        `the upload exceeds the limit of ${MAX_UPLOAD_BYTES} bytes`,
      );

      // Without Content-Length (chunked), the limit is enforced while streaming to disk.
      const chunk = Buffer.from(line.repeat(2048));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > MAX_UPLOAD_BYTES * 2) return controller.close();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const streamed = await upload('country', 'too-big', stream);
      expect(streamed.status).toBe(413);
      expect(streamed.body.detail).toBe(
        `the upload exceeds the limit of ${MAX_UPLOAD_BYTES} bytes`,
      );
      expect((await c().admin('GET', '/v1/datasets')).body).toEqual(before);
      expect(datasetFiles()).toEqual(files);
      expect(scratchFiles()).toEqual([]);
    });

    it('streams a large upload to disk', async () => {
      // About 4 MB of @ip-location-db style country ranges: one /24 per line.
      const lines: string[] = [];
      for (let i = 0; i < 150_000; i++) {
        const a = 1 + (i >> 16);
        const b = (i >> 8) & 255;
        const d = i & 255;
        lines.push(`${a}.${b}.${d}.0,${a}.${b}.${d}.255,${i % 2 ? 'XA' : 'XB'}`);
      }
      const body = Buffer.from(`${lines.join('\n')}\n`);
      expect(body.length).toBeGreaterThan(3_000_000);
      expect(body.length).toBeLessThan(MAX_UPLOAD_BYTES);
      // Sent in chunks, pausing halfway until the hub has written the first half to its scratch
      // file: the body goes to disk while it arrives, it is not collected in memory first.
      const half = body.length / 2;
      let offset = 0;
      let onDiskAtHalf = 0;
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (offset >= half && onDiskAtHalf === 0) {
            onDiskAtHalf = await waitFor(
              'the first half of the upload on disk',
              async () => {
                const [file] = scratchFiles();
                const size = file ? statSync(join(stack.hub.dataDir, 'tmp', file)).size : 0;
                return size >= half - 512 * 1024 ? size : undefined;
              },
              15_000,
            );
          }
          if (offset >= body.length) return controller.close();
          const end = Math.min(offset + 64 * 1024, body.length);
          controller.enqueue(body.subarray(offset, end));
          offset = end;
        },
      });
      const started = performance.now();
      const answer = await upload('country', 'large', stream, '', 'text/csv');
      expect(answer.status, answer.text).toBe(200);
      expect(onDiskAtHalf).toBeGreaterThan(0);
      expect(scratchFiles()).toEqual([]);
      expect(answer.body).toMatchObject({
        entries: 150_000,
        bytes: body.length,
        sha256: sha256(body),
      });
      console.log(
        `[${kind}] uploaded ${(body.length / 1e6).toFixed(1)} MB country CSV in ${Math.round(performance.now() - started)} ms`,
      );
      // Large datasets slow every later build: remove it again.
      expect((await c().admin('DELETE', '/v1/datasets/country/large')).status).toBe(204);
      expect(existsSync(join(stack.hub.dataDir, 'datasets', `${sha256(body)}.txt`))).toBe(false);
    });
  });
});
