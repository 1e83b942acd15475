/**
 * Small typed helpers over global `fetch` for the hub's two kinds of callers: operators (the
 * admin token) and clients (a site key). Every credential the hub hands out (site creation, key
 * rotation) is remembered in `secrets`, and every other answer is checked not to contain any of
 * them, so "keys are shown once and never again" is asserted on every request a test makes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '@rampart/rules-core/evaluator/decision';
import { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import type { RequestInfo } from '@rampart/rules-core/evaluator/request';
import { openSnapshot, type Snapshot } from '@rampart/rules-core/snapshot/reader';
import { expect } from 'vitest';
import type { BuildView } from '../builds/builds.service.js';
import type { IssuedKeyView, SiteView } from '../sites/sites.dto.js';

export type { BuildView, SiteView };

export interface JsonResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body (undefined when the body is empty or not JSON). */
  readonly body: T;
  readonly text: string;
}

export interface BinaryResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly bytes: Buffer;
}

export interface RequestOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** A body sent as is (instead of JSON-encoding `body`). */
  readonly raw?: string | Buffer | ReadableStream<Uint8Array>;
  /** Sent as X-Forwarded-For (the hub believes it when HUB_TRUST_PROXY=true). */
  readonly from?: string;
  /** Overrides the admin token (`null`: no Authorization header). */
  readonly token?: string | null;
}

/** Responses that legitimately carry a new credential. */
const ISSUES_CREDENTIALS = [/^POST \/v1\/sites$/, /^POST \/v1\/sites\/[^/]+\/keys\/rotate$/];

export class HubClient {
  constructor(
    readonly url: string,
    readonly adminToken: string,
    /** Every secret seen (admin token, issued site keys). Shared by the clients of a suite. */
    readonly secrets: Set<string> = new Set([adminToken]),
  ) {
    secrets.add(adminToken);
  }

  /** A client of another hub instance that shares this one's secrets. */
  of(hub: { url: string; adminToken: string }): HubClient {
    return new HubClient(hub.url, hub.adminToken, this.secrets);
  }

  /** An admin (management API) request; `body` is sent as JSON. */
  async admin<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<JsonResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? this.adminToken : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.from) headers['x-forwarded-for'] = options.from;
    let payload: string | Buffer | ReadableStream<Uint8Array> | undefined = options.raw;
    if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: payload,
      signal: AbortSignal.timeout(60_000),
      ...(payload instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await response.text();
    const answer = { status: response.status, headers: response.headers, text, body: parse(text) };
    const route = `${method} ${path.split('?')[0]}`;
    if (ISSUES_CREDENTIALS.some((r) => r.test(route)) && response.status < 300) {
      const issued = (answer.body as { credentials?: IssuedKeyView; key?: string }) ?? {};
      const key = issued.credentials?.key ?? issued.key;
      if (key) this.secrets.add(key);
    } else {
      this.expectNoSecret(`${route} -> ${response.status}`, text, response.headers);
    }
    return answer as JsonResponse<T>;
  }

  /**
   * A client request with a site key (snapshot download), through node:http so the body arrives
   * exactly as sent (fetch would decompress gzip and add its own Accept-Encoding).
   */
  async site(
    key: string | null,
    path = '/v1/snapshot',
    options: RequestOptions = {},
  ): Promise<BinaryResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (options.from) headers['x-forwarded-for'] = options.from;
    const response = await httpGet(`${this.url}${path}`, headers);
    this.expectNoSecret(`GET ${path} -> ${response.status}`, response.bytes, response.headers);
    return response;
  }

  /** Creates a site; resolves with it and its first key. */
  async createSite(name: string, id?: string): Promise<{ site: SiteView; key: string }> {
    const created = await this.admin<{ site: SiteView; credentials: IssuedKeyView }>(
      'POST',
      '/v1/sites',
      id === undefined ? { name } : { name, id },
    );
    expect(created.status, created.text).toBe(201);
    return { site: created.body.site, key: created.body.credentials.key };
  }

  async getSite(siteId: string): Promise<SiteView> {
    const response = await this.admin<SiteView>('GET', `/v1/sites/${siteId}`);
    expect(response.status, response.text).toBe(200);
    return response.body;
  }

  async builds(siteId: string): Promise<BuildView[]> {
    const response = await this.admin<BuildView[]>('GET', `/v1/sites/${siteId}/builds`);
    expect(response.status, response.text).toBe(200);
    return response.body;
  }

  /** Waits until the site's published version is at least `version` and its builds settled. */
  async waitForVersion(siteId: string, version: number, timeoutMs = 30_000): Promise<SiteView> {
    return waitFor(
      `site ${siteId} to publish version ${version}`,
      async () => {
        const site = await this.getSite(siteId);
        return (site.currentVersion ?? 0) >= version ? site : undefined;
      },
      timeoutMs,
    );
  }

  /** Waits until no build of the site is running and one matches `predicate`. */
  async waitForBuild(
    siteId: string,
    predicate: (build: BuildView) => boolean,
    timeoutMs = 30_000,
  ): Promise<BuildView> {
    return waitFor(
      `a matching build of site ${siteId}`,
      async () => {
        const builds = await this.builds(siteId);
        if (builds.some((b) => b.status === 'running')) return undefined;
        return builds.find(predicate);
      },
      timeoutMs,
    );
  }

  /** Asserts that `content` (and header values) hold no secret this suite has seen. */
  expectNoSecret(where: string, content: string | Buffer, headers?: Headers): void {
    const haystacks: (string | Buffer)[] = [content];
    if (headers) haystacks.push([...headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n'));
    for (const secret of this.secrets) {
      for (const haystack of haystacks) {
        if (haystack.includes(secret)) {
          expect.fail(`${where}: the answer contains a secret (${secret.slice(0, 6)}...)`);
        }
      }
    }
  }
}

/** A GET through node:http with exactly `headers`; bounded by `timeoutMs`. */
export function httpGet(
  url: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): Promise<BinaryResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined)
            answer.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        resolve({ status: res.statusCode ?? 0, headers: answer, bytes: Buffer.concat(chunks) });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Polls `probe` every 100 ms until it returns a value; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A request with defaults, for {@link decide}. */
export function request(overrides: Partial<RequestInfo> = {}): RequestInfo {
  return {
    ip: '192.0.2.10',
    method: 'GET',
    host: 'shop.example',
    path: '/',
    query: '',
    userAgent: 'Mozilla/5.0',
    headers: {},
    ...overrides,
  };
}

/**
 * Opens downloaded snapshot bytes with rules-core (verified, as a client would) from a temporary
 * file, runs `use` on it, then closes and removes it.
 */
export async function withSnapshot<T>(bytes: Buffer, use: (snapshot: Snapshot) => T): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-download-'));
  try {
    const path = join(dir, 'snapshot.sqlite');
    writeFileSync(path, bytes);
    const snapshot = await openSnapshot(path);
    try {
      return use(snapshot);
    } finally {
      snapshot.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Opens downloaded snapshot bytes and evaluates each request: proves the hub built a real,
 * usable snapshot.
 */
export function decide(
  bytes: Buffer,
  requests: readonly RequestInfo[],
): Promise<{ version: number; ruleIds: string[]; decisions: Decision[] }> {
  return withSnapshot(bytes, (snapshot) => {
    const evaluator = new Evaluator(snapshot);
    return {
      version: snapshot.version,
      ruleIds: snapshot.rules.map((r) => r.id),
      decisions: requests.map((r) => evaluator.evaluate(r)),
    };
  });
}
