/**
 * Builds and distribution against the real hub, real Redis and each database: a change becomes
 * a published, content-addressed snapshot that rules-core opens and enforces; conditional and
 * gzip downloads; immutable URLs; instance identity; retention; a failed build keeping the
 * previous version; and a burst of 200 downloads served from one file read.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BinaryResponse,
  decide,
  request,
  type SiteView,
  waitFor,
} from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';

const RETENTION = 2;

afterAll(() => stopPostgres());

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

const rules = [
  {
    id: 'wp',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
  },
  { id: 'bad-net', type: 'ip', action: 'block', ranges: ['203.0.113.0/24'] },
  { id: 'drop', type: 'reputation', action: 'block', lists: ['drop'] },
];

describe.each(DATABASE_KINDS)('snapshot builds and distribution on %s', (kind) => {
  let stack: HubStack;
  const c = () => stack.client;

  beforeAll(async () => {
    stack = await startStack(kind, { env: { HUB_SNAPSHOT_RETENTION: String(RETENTION) } });
  });
  afterAll(() => stack?.stop());

  /** Waits until every change of the site is built (or failed) and nothing runs. */
  const settled = (siteId: string) =>
    waitFor(`site ${siteId} to settle`, async () => {
      const site = await c().getSite(siteId);
      if (site.builtRevision !== site.rulesRevision) return undefined;
      const builds = await c().builds(siteId);
      return builds.some((b) => b.status === 'running') ? undefined : site;
    });

  /**
   * Waits for `version` of the site to be published, checking on every look that a published
   * version's build already reads `succeeded` (they commit together: a client or the dashboard
   * must never see a live version whose build still says running).
   */
  const publishedWithItsBuild = (siteId: string, version: number) =>
    waitFor(`site ${siteId} to publish version ${version}`, async () => {
      const site = await c().getSite(siteId);
      const builds = await c().builds(siteId); // read after the site: at least as new
      const current = site.currentVersion ?? 0;
      expect(builds.find((b) => b.version === current)?.status ?? 'none', `v${current}`).toBe(
        current === 0 ? 'none' : 'succeeded',
      );
      return current >= version ? site : undefined;
    });

  const download = (key: string, headers: Record<string, string> = {}, path = '/v1/snapshot') =>
    c().site(key, path, { headers: { 'accept-encoding': 'identity', ...headers } });

  /** Checks the download's headers against its bytes and returns its version and hash. */
  const verified = (response: BinaryResponse) => {
    expect(response.status).toBe(200);
    const hash = sha256(response.bytes);
    expect(response.headers.get('etag')).toBe(`"${hash}"`);
    expect(response.headers.get('x-rampart-snapshot-sha256')).toBe(hash);
    expect(response.headers.get('content-length')).toBe(String(response.bytes.length));
    expect(response.headers.get('content-type')).toBe('application/vnd.sqlite3');
    return { hash, version: Number(response.headers.get('x-rampart-snapshot-version')) };
  };

  describe('a site with rules', () => {
    let site: SiteView;
    let key: string;
    let current: { hash: string; version: number; bytes: Buffer };

    beforeAll(async () => {
      const drop = await c().admin('PUT', '/v1/datasets/reputation/drop', undefined, {
        raw: '# DROP\n100.66.0.0/16 ; SBL1\n',
        headers: { 'content-type': 'text/plain' },
      });
      expect(drop.status, drop.text).toBe(200);
      ({ site, key } = await c().createSite('Shop', 'shop'));
      const imported = await c().admin('POST', '/v1/sites/shop/rules/import', { rules });
      expect(imported.status, imported.text).toBe(200);
    });

    it('builds a snapshot with rules-core and publishes it once complete', async () => {
      site = await settled('shop');
      expect(site.currentVersion).toBe(1);
      const builds = await c().builds('shop');
      expect(builds).toHaveLength(1);
      expect(builds[0]).toMatchObject({
        status: 'succeeded',
        version: 1,
        rulesRevision: site.rulesRevision,
        error: null,
      });
      const [published] = (
        await c().admin<{ version: number; sha256: string; bytes: number }[]>(
          'GET',
          '/v1/sites/shop/snapshots',
        )
      ).body;
      expect(published).toMatchObject({ version: 1, rulesRevision: site.rulesRevision });
      // Content-addressed on disk; nothing left in the scratch folder.
      const file = join(stack.hub.dataDir, 'snapshots', `${published?.sha256}.sqlite`);
      expect(sha256(readFileSync(file))).toBe(published?.sha256);
      expect(readdirSync(join(stack.hub.dataDir, 'tmp'))).toEqual([]);
    });

    it('serves the current version with its hash, version and length; the snapshot enforces the rules', async () => {
      const response = await download(key);
      current = { ...verified(response), bytes: response.bytes };
      expect(current.version).toBe(1);
      // The "current version" lookup is the only request that must not be cached...
      expect(response.headers.get('cache-control')).toBe('private, no-cache');
      // ...and it names the immutable URL of this content.
      expect(response.headers.get('content-location')).toBe(`/v1/snapshots/${current.hash}`);

      const { version, ruleIds, decisions } = await decide(response.bytes, [
        request({ path: '/wp-admin/install.php' }),
        request({ ip: '203.0.113.50' }),
        request({ ip: '100.66.1.2' }),
        request({ path: '/shop' }),
      ]);
      expect(version).toBe(1);
      expect(ruleIds).toEqual(['wp', 'bad-net', 'drop']);
      expect(decisions.map((d) => `${d.action}:${d.ruleId}`)).toEqual([
        'block:wp',
        'block:bad-net',
        'block:drop',
        'pass:null',
      ]);
    });

    it('answers 304 to If-None-Match with the current ETag', async () => {
      const etag = `"${current.hash}"`;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const response = await download(key, { 'if-none-match': ifNoneMatch });
        expect(response.status, ifNoneMatch).toBe(304);
        expect(response.bytes.length).toBe(0);
        expect(response.headers.get('etag')).toBe(etag);
        expect(response.headers.get('x-rampart-snapshot-version')).toBe('1');
      }
      const stale = await download(key, { 'if-none-match': `"${'0'.repeat(64)}"` });
      expect(verified(stale).hash).toBe(current.hash);
    });

    it('gzips when the client accepts it: the same bytes, a smaller body', async () => {
      const response = await download(key, { 'accept-encoding': 'gzip, deflate' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-encoding')).toBe('gzip');
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
      expect(response.headers.get('content-length')).toBe(String(response.bytes.length));
      expect(response.headers.get('etag')).toBe(`"${current.hash}"`);
      expect(response.bytes.length).toBeLessThan(current.bytes.length);
      expect(gunzipSync(response.bytes).equals(current.bytes)).toBe(true);
      const refused = await download(key, { 'accept-encoding': 'gzip;q=0, identity' });
      expect(refused.headers.get('content-encoding')).toBeNull();
      expect(refused.bytes.equals(current.bytes)).toBe(true);
    });

    it('serves the immutable content-addressed URL, cacheable by a CDN', async () => {
      const path = `/v1/snapshots/${current.hash}`;
      const response = await download(key, {}, path);
      expect(verified(response).hash).toBe(current.hash);
      expect(response.bytes.equals(current.bytes)).toBe(true);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const gzipped = await download(key, { 'accept-encoding': 'gzip' }, path);
      expect(gunzipSync(gzipped.bytes).equals(current.bytes)).toBe(true);
      expect(gzipped.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const notModified = await download(key, { 'if-none-match': `"${current.hash}"` }, path);
      expect(notModified.status).toBe(304);

      expect((await download(key, {}, '/v1/snapshots/NOT-A-HASH')).status).toBe(400);
      expect((await download(key, {}, `/v1/snapshots/${'a'.repeat(64)}`)).status).toBe(404);
      // Another tenant's key does not open this site's snapshot, even knowing its hash.
      const other = await c().createSite('Other', 'other');
      expect((await download(other.key, {}, path)).status).toBe(404);
      expect((await c().site(null, path)).status).toBe(401);
    });

    it('records which client instances run which version', async () => {
      const identify = (instance: string, version: string) =>
        download(key, {
          'x-rampart-instance': instance,
          'x-rampart-snapshot-version': version,
          'if-none-match': `"${current.hash}"`,
          'user-agent': 'rampart-waf-client/0.1',
        });
      expect((await identify('web-1', '1')).status).toBe(304);
      expect((await identify('web-2', '0')).status).toBe(304);
      await identify('bad instance id!', '1'); // ignored, and the download still works
      const instances = await waitFor('both instances to be recorded', async () => {
        const list = await c().admin<{ instanceId: string; snapshotVersion: number | null }[]>(
          'GET',
          '/v1/sites/shop/instances',
        );
        return list.body.length >= 2 ? list.body : undefined;
      });
      expect(instances.map((i) => [i.instanceId, i.snapshotVersion]).sort()).toEqual([
        ['web-1', 1],
        ['web-2', 0],
      ]);
      expect(instances[0]).toMatchObject({ userAgent: 'rampart-waf-client/0.1' });
      // A version change is recorded at once (not throttled like repeated polls).
      await identify('web-2', '1');
      await waitFor('web-2 to run version 1', async () => {
        const list = await c().admin<{ instanceId: string; snapshotVersion: number | null }[]>(
          'GET',
          '/v1/sites/shop/instances',
        );
        return list.body.find((i) => i.instanceId === 'web-2')?.snapshotVersion === 1
          ? true
          : undefined;
      });
    });

    it('publishes a higher version for every change and keeps the last versions only', async () => {
      const seen = [current.hash];
      for (let n = 2; n <= 4; n++) {
        const rule = { id: `ua-${n}`, type: 'pattern', action: 'block' } as const;
        const when = [{ field: 'user_agent', match: 'contains', value: `scanner-${n}` }];
        expect((await c().admin('POST', '/v1/sites/shop/rules', { ...rule, when })).status).toBe(
          201,
        );
        await publishedWithItsBuild('shop', n);
        site = await settled('shop');
        expect(site.currentVersion).toBe(n);
        const response = await download(key);
        const { hash, version } = verified(response);
        expect(version).toBe(n);
        const { decisions } = await decide(response.bytes, [
          request({ userAgent: `Scanner-${n} 1.0` }),
        ]);
        expect(decisions[0]).toMatchObject({ action: 'block', ruleId: `ua-${n}` });
        seen.push(hash);
      }
      const retained = await c().admin<{ version: number; sha256: string }[]>(
        'GET',
        '/v1/sites/shop/snapshots',
      );
      expect(retained.body.map((s) => s.version)).toEqual([4, 3]);
      expect(retained.body.map((s) => s.sha256)).toEqual([seen[3], seen[2]]);
      for (const [i, hash] of seen.entries()) {
        const kept = i >= seen.length - RETENTION;
        const file = join(stack.hub.dataDir, 'snapshots', `${hash}.sqlite`);
        expect(existsSync(file), `version ${i + 1}`).toBe(kept);
        expect((await download(key, {}, `/v1/snapshots/${hash}`)).status).toBe(kept ? 200 : 404);
      }
      const builds = await c().builds('shop');
      expect(builds.map((b) => b.version)).toEqual([4, 3, 2, 1]);
      current = { hash: seen[3] ?? '', version: 4, bytes: Buffer.alloc(0) };
    });

    it('serves a burst of 200 concurrent downloads from a single file read', async () => {
      // A new version nobody has downloaded yet.
      await c().admin('POST', '/v1/sites/shop/rules', {
        id: 'burst',
        type: 'ip',
        action: 'block',
        ranges: ['192.0.2.0/24'],
      });
      site = await settled('shop');
      const before = (await c().admin<{ snapshotFileReads: number }>('GET', '/v1/metrics')).body;
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          download(key, { 'accept-encoding': i % 2 === 0 ? 'gzip' : 'identity' }),
        ),
      );
      const elapsed = performance.now() - started;
      const after = (await c().admin<{ snapshotFileReads: number }>('GET', '/v1/metrics')).body;
      expect(responses.map((r) => r.status)).toEqual(Array(200).fill(200));
      const etags = new Set(responses.map((r) => r.headers.get('etag')));
      expect(etags.size).toBe(1);
      const raw = responses[1]?.bytes ?? Buffer.alloc(0);
      expect(`"${sha256(raw)}"`).toBe([...etags][0]);
      for (const [i, r] of responses.entries()) {
        expect((i % 2 === 0 ? gunzipSync(r.bytes) : r.bytes).equals(raw)).toBe(true);
      }
      const reads = after.snapshotFileReads - before.snapshotFileReads;
      console.log(
        `[${kind}] 200 concurrent downloads of version ${site.currentVersion} (${raw.length} bytes): ${Math.round(elapsed)} ms, ${reads} file read(s)`,
      );
      expect(reads).toBe(1);
      expect(site.currentVersion).toBe(5);
      // The file is not built again either: one build for the one change.
      expect((await c().builds('shop')).filter((b) => b.version === 5)).toHaveLength(1);
    });
  });

  it('a failed build leaves the previous version published and shows the error', async () => {
    const list = '# flaky list\n100.70.0.0/16\n';
    const uploaded = await c().admin<{ sha256: string }>(
      'PUT',
      '/v1/datasets/reputation/flaky',
      undefined,
      { raw: list, headers: { 'content-type': 'text/plain' } },
    );
    expect(uploaded.status).toBe(200);
    const { key } = await c().createSite('Fragile', 'fragile');
    await c().admin('POST', '/v1/sites/fragile/rules', {
      id: 'flaky',
      type: 'reputation',
      action: 'block',
      lists: ['flaky'],
    });
    const good = await settled('fragile');
    const before = verified(await download(key));
    expect(before.version).toBe(good.currentVersion);

    // The dataset file disappears from the shared storage: the next build cannot read it.
    const datasetFile = join(stack.hub.dataDir, 'datasets', `${uploaded.body.sha256}.txt`);
    rmSync(datasetFile);
    await c().admin('POST', '/v1/sites/fragile/rules', {
      id: 'later',
      type: 'ip',
      action: 'block',
      ranges: ['198.51.100.7'],
    });
    const changed = await c().getSite('fragile');
    const failed = await c().waitForBuild(
      'fragile',
      (b) => b.status === 'failed' && b.rulesRevision === changed.rulesRevision,
    );
    expect(failed.error).toMatch(/ENOENT|no such file/);
    expect(failed.finishedAt).not.toBeNull();
    expect(failed.version).toBeNull();

    const after = await c().getSite('fragile');
    expect(after.currentVersion).toBe(good.currentVersion);
    expect(after.builtRevision).toBeLessThan(after.rulesRevision);
    const still = await download(key);
    expect(verified(still)).toEqual(before);
    const { decisions } = await decide(still.bytes, [request({ ip: '100.70.3.4' })]);
    expect(decisions[0]).toMatchObject({ action: 'block', ruleId: 'flaky' });
    expect(await readyStatus()).toBe(200);

    // The failed build left no file behind: once every other site is built, the snapshot folder
    // holds exactly the published versions and the scratch folder is empty.
    await waitFor('every other site to settle', async () => {
      for (const other of (await c().admin<SiteView[]>('GET', '/v1/sites')).body) {
        if (other.id !== 'fragile' && other.builtRevision !== other.rulesRevision) return undefined;
        if ((await c().builds(other.id)).some((b) => b.status === 'running')) return undefined;
      }
      return true;
    });
    const published = await stack.query<{ sha256: string }>('SELECT sha256 FROM snapshots');
    expect(readdirSync(join(stack.hub.dataDir, 'snapshots')).sort()).toEqual(
      [...new Set(published.map((p) => `${p.sha256}.sqlite`))].sort(),
    );
    expect(readdirSync(join(stack.hub.dataDir, 'tmp'))).toEqual([]);

    // Nothing builds the failing revision again by itself (not the reconciler, nor a request
    // queued while the build ran)...
    const count = (await c().builds('fragile')).length;
    await new Promise((resolve) => setTimeout(resolve, 1500)); // three reconcile intervals
    expect(await c().builds('fragile')).toHaveLength(count);

    // ...but once the cause is fixed, an operator's rebuild publishes the change.
    writeFileSync(datasetFile, list);
    const retry = await c().admin<{ queued: boolean }>('POST', '/v1/sites/fragile/builds');
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ queued: true });
    const fixed = await c().waitForVersion('fragile', (good.currentVersion ?? 0) + 1);
    expect(fixed.builtRevision).toBe(fixed.rulesRevision);
    const rebuilt = await download(key);
    expect(verified(rebuilt).version).toBe((good.currentVersion ?? 0) + 1);
    const { decisions: now } = await decide(rebuilt.bytes, [request({ ip: '198.51.100.7' })]);
    expect(now[0]).toMatchObject({ action: 'block', ruleId: 'later' });
  });

  const readyStatus = async () =>
    (await c().admin('GET', '/health/ready', undefined, { token: null })).status;
});
