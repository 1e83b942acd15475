/**
 * Local provisioning for `npm run dev` (see `scripts/dev.mjs`): make the hub know a demo site,
 * keep a working key for it in a file, and give the site a few rules to play with.
 *
 * Idempotent: run it on every start. The key file is written with mode 0600 and its content is
 * never logged; messages name the file instead. Every network wait is bounded.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_RULES, type RuleJson } from '../waf/demo-rules.js';

export interface ProvisionOptions {
  readonly hubUrl: string;
  readonly adminToken: string;
  readonly siteId: string;
  /** Where the site key is kept (created with mode 0600). */
  readonly keyFile: string;
  readonly log: (line: string) => void;
  /** Default the demo rules (`waf/demo-rules.ts`). */
  readonly rules?: readonly RuleJson[];
}

export interface Provisioned {
  readonly key: string;
  /** What happened to the site and its key. */
  readonly site: 'created' | 'key_kept' | 'key_rotated';
  readonly rulesAdded: number;
}

export class ProvisionError extends Error {
  override name = 'ProvisionError';
}

/** Polls `/health/ready` until it answers 200; throws a clear error after `timeoutMs`. */
export async function waitForHub(
  hubUrl: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  let announced = false;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${hubUrl}/health/ready`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
      last = `status ${response.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      last = cause?.code ?? cause?.message ?? (error as Error).message;
    }
    if (!announced) {
      log(`waiting for the hub at ${hubUrl} (up to ${Math.round(timeoutMs / 1000)} s)...`);
      announced = true;
    }
    await sleep(1000);
  }
  throw new ProvisionError(
    `the hub at ${hubUrl} was not ready after ${Math.round(timeoutMs / 1000)} s (${last}). ` +
      'Start everything with `npm run dev` at the repository root, or set RAMPART_HUB_URL.',
  );
}

interface HubAnswer {
  readonly status: number;
  readonly json: unknown;
}

async function call(
  options: ProvisionOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<HubAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.adminToken}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${options.hubUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

function failure(what: string, answer: HubAnswer): ProvisionError {
  // The hub's error bodies carry messages, never credentials.
  const message = (answer.json as { message?: unknown } | undefined)?.message;
  return new ProvisionError(
    `${what} failed: HTTP ${answer.status}${message ? ` ${JSON.stringify(message)}` : ''}`,
  );
}

const ok = (status: number) => status === 200 || status === 201;

function storeKey(file: string, key: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** True unless the hub refuses `key` on the client endpoint (401/403). */
async function keyAccepted(hubUrl: string, key: string): Promise<boolean> {
  const response = await fetch(`${hubUrl}/v1/snapshot`, {
    method: 'HEAD',
    // No X-Rampart-Instance: this check is not an instance, and must not count in the fleet.
    headers: { authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(10_000),
  });
  return response.status !== 401 && response.status !== 403;
}

async function ensureSite(
  options: ProvisionOptions,
): Promise<{ key: string; site: Provisioned['site'] }> {
  const { siteId, keyFile, log } = options;
  const site = await call(options, 'GET', `/v1/sites/${siteId}`);
  if (site.status === 404) {
    const created = await call(options, 'POST', '/v1/sites', {
      id: siteId,
      name: 'Rampart demo shop (local)',
    });
    if (!ok(created.status)) throw failure(`creating site ${siteId}`, created);
    const key = (created.json as { credentials: { key: string } }).credentials.key;
    storeKey(keyFile, key);
    log(`created site "${siteId}"; its key is in ${keyFile}`);
    return { key, site: 'created' };
  }
  if (site.status !== 200) throw failure(`reading site ${siteId}`, site);
  const stored = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '';
  if (stored && (await keyAccepted(options.hubUrl, stored))) {
    log(`site "${siteId}" exists; using the key in ${keyFile}`);
    return { key: stored, site: 'key_kept' };
  }
  const rotated = await call(options, 'POST', `/v1/sites/${siteId}/keys/rotate`, {
    revokeExisting: true,
  });
  if (!ok(rotated.status)) throw failure(`rotating the key of ${siteId}`, rotated);
  const key = (rotated.json as { key: string }).key;
  storeKey(keyFile, key);
  log(
    `site "${siteId}" exists but ${stored ? 'the stored key was refused' : 'no key was stored'}: rotated its key; the new one is in ${keyFile}`,
  );
  return { key, site: 'key_rotated' };
}

async function ensureRules(options: ProvisionOptions): Promise<number> {
  const { siteId, log } = options;
  const rules = options.rules ?? DEMO_RULES;
  const listed = await call(options, 'GET', `/v1/sites/${siteId}/rules`);
  if (listed.status !== 200) throw failure(`listing the rules of ${siteId}`, listed);
  const count = (listed.json as { rules: unknown[] }).rules.length;
  if (count > 0) {
    log(`site "${siteId}" has ${count} rule(s); leaving them as they are`);
    return 0;
  }
  const imported = await call(options, 'POST', `/v1/sites/${siteId}/rules/import?mode=replace`, {
    rules,
  });
  if (imported.status !== 200) throw failure(`adding the demo rules to ${siteId}`, imported);
  log(`added ${rules.length} demo rules: ${rules.map((r) => String(r.id)).join(', ')}`);
  return rules.length;
}

/** Makes sure the site, a working key in `keyFile` and (on an empty site) the demo rules exist. */
export async function provisionDemoSite(options: ProvisionOptions): Promise<Provisioned> {
  const { key, site } = await ensureSite(options);
  const rulesAdded = await ensureRules(options);
  return { key, site, rulesAdded };
}

/** Network errors that mean "the hub is not there right now", as opposed to a wrong answer. */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

function connectionFailure(error: unknown): string | undefined {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && CONNECTION_FAILURES.has(code) ? code : undefined;
}

/**
 * {@link waitForHub}, then {@link provisionDemoSite}, both again from the start when the hub
 * stops answering in between, until `timeoutMs` has passed. In development the hub restarts
 * whenever its code is recompiled, also while the demo starts; provisioning is idempotent, so
 * starting over is safe. A wrong answer (an HTTP error) is not retried.
 */
export async function provisionWhenReady(
  options: ProvisionOptions & { readonly timeoutMs: number },
): Promise<Provisioned> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    await waitForHub(options.hubUrl, Math.max(0, deadline - Date.now()), options.log);
    try {
      return await provisionDemoSite(options);
    } catch (error) {
      const failure = connectionFailure(error);
      if (failure === undefined || Date.now() >= deadline) throw error;
      options.log(
        `the hub at ${options.hubUrl} stopped answering (${failure}); waiting for it again`,
      );
    }
  }
}
