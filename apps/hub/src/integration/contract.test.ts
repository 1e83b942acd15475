/**
 * The API's contract: schemathesis (PyPI; `npm test` installs it into .tools/schemathesis)
 * against the real hub's own `/docs/openapi.json`, every check, for a bounded time. It fails on
 * any answer the document does not describe: an undeclared status, a body or header off its
 * schema, a valid request refused or an invalid one accepted, a server error.
 *
 * The hub gets a site with a published snapshot (`contract`, whose key schemathesis uses for the
 * distribution endpoints) and one whose keys it may rotate and revoke (`contract-keys`);
 * `contract.schemathesis.toml` says which operation gets which and why, and `contract_hooks.py`
 * why every request comes from its own address.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HubStack, startStack } from '../test-support/hub-stack.js';

const here = dirname(fileURLToPath(import.meta.url));
const schemathesis = join(here, '../../../../.tools/schemathesis/bin/schemathesis');
/** How long schemathesis fuzzes (it repeats until the budget is spent) and its cases per run. */
const BUDGET_S = 90;
const EXAMPLES = 15;

describe('the OpenAPI document against the hub (schemathesis)', () => {
  let stack: HubStack;
  let siteKey: string;

  beforeAll(async () => {
    stack = await startStack('sqlite', {
      env: {
        HUB_TRUST_PROXY: 'true', // contract_hooks.py: one address per request
        HUB_MAX_POLL_WAIT_MS: '2000', // the longest a generated blocking poll can hold
      },
    });
    siteKey = (await stack.client.createSite('contract', 'contract')).key;
    await stack.client.createSite('contract keys', 'contract-keys');
    const rule = await stack.client.admin('POST', '/v1/sites/contract/rules', {
      id: 'office',
      type: 'ip',
      action: 'allow',
      ranges: ['192.0.2.0/24'],
    });
    expect(rule.status, rule.text).toBe(201);
    await stack.client.waitForVersion('contract', 1);
  });
  afterAll(() => stack?.stop());

  it(
    'finds no answer the document does not describe',
    async () => {
      expect(existsSync(schemathesis), `${schemathesis} (npm test installs it)`).toBe(true);
      const run = await runSchemathesis([
        '--config-file',
        join(here, 'contract.schemathesis.toml'),
        'run',
        `${stack.hub.url}/docs/openapi.json`,
        '--checks',
        'all',
        '--max-examples',
        String(EXAMPLES),
        '--max-time',
        String(BUDGET_S),
        '--no-color',
      ]);
      const summary = /(\d+) generated, (.*)/.exec(run.output);
      console.log(`schemathesis: ${summary?.[0] ?? 'no summary'}`);
      if (run.code !== 0)
        expect.fail(`schemathesis exited with ${run.code}:\n${failuresOf(run.output)}`);
      expect(Number(summary?.[1] ?? 0)).toBeGreaterThan(500);
    },
    (BUDGET_S + 60) * 1000,
  );

  /**
   * The report's failure sections and summary, each line clipped: a failing case can carry a
   * body of megabytes (a batch at every maxItems), which would push the response status and the
   * summary out of any log.
   */
  function failuresOf(output: string): string {
    const start = output.search(/^=+ (FAILURES|ERRORS) =+$/m);
    const warnings = output.search(/^=+ WARNINGS =+$/m);
    const summary = output.search(/^=+ SUMMARY =+$/m);
    const sections = [
      start === -1
        ? output.slice(-4000)
        : output.slice(start, warnings === -1 ? summary : warnings),
      summary === -1 ? '' : output.slice(summary),
    ].join('\n');
    return sections
      .split('\n')
      .map((line) =>
        line.length > 400 ? `${line.slice(0, 400)}… (${line.length} characters)` : line,
      )
      .join('\n');
  }

  function runSchemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
    // Its caches (.hypothesis, .schemathesis) go to a scratch folder, not the work tree.
    const cwd = mkdtempSync(join(tmpdir(), 'rampart-contract-'));
    return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(schemathesis, args, {
        cwd,
        env: {
          ...process.env,
          RAMPART_CONTRACT_ADMIN_TOKEN: stack.hub.adminToken,
          RAMPART_CONTRACT_SITE_KEY: siteKey,
          SCHEMATHESIS_HOOKS: 'contract_hooks',
          PYTHONPATH: here,
          PYTHONDONTWRITEBYTECODE: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGTERM'), (BUDGET_S + 45) * 1000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    }).finally(() => rmSync(cwd, { recursive: true, force: true }));
  }
});
