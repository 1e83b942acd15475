/**
 * `rampart evaluate`: one request against a snapshot, the decision printed as JSON.
 */

import { Evaluator } from '../evaluator/evaluator.js';
import { describeParseFailure, parseIpInto } from '../ip/address.js';
import { type CliIo, usageError } from './cli-error.js';
import { parseOptions } from './parse-options.js';
import { openOrExplain } from './snapshot-inspect-command.js';
import type { CommandSpec } from './usage.js';

export const EVALUATE = {
  name: 'evaluate',
  summary: 'evaluate one request against a snapshot and print the decision as JSON',
  options: {
    snapshot: {
      type: 'string',
      value: 'FILE',
      required: true,
      description: 'the snapshot (verified first, as a client does)',
    },
    ip: {
      type: 'string',
      value: 'IP',
      required: true,
      description: 'client address, IPv4 or IPv6',
    },
    method: { type: 'string', value: 'M', default: 'GET', description: 'request method' },
    host: { type: 'string', value: 'H', default: 'localhost', description: 'Host header' },
    path: {
      type: 'string',
      value: 'P',
      default: '/',
      description: 'request path, optionally with "?query"',
    },
    query: {
      type: 'string',
      value: 'Q',
      description: 'query string without the "?" (wins over one in --path)',
    },
    ua: {
      type: 'string',
      value: 'UA',
      description: 'User-Agent header (wins over --header user-agent=...)',
    },
    header: {
      type: 'string',
      value: 'name=value',
      multiple: true,
      description: 'a request header; the name is case-insensitive',
    },
  },
  examples: [
    'rampart evaluate --snapshot site.sqlite --ip 203.0.113.9 --path /wp-admin/',
    "rampart evaluate --snapshot site.sqlite --ip 2001:db8::1 --method POST --path /login --header 'x-forwarded-proto=https'",
  ],
} as const satisfies CommandSpec;

export async function evaluateCommand(argv: readonly string[], io: CliIo): Promise<void> {
  const { values } = parseOptions(argv, EVALUATE);
  const snapshotPath = values.snapshot;
  const ip = values.ip;
  const code = parseIpInto(ip, new Uint32Array(4));
  if (code < 0) throw usageError(`--ip ${JSON.stringify(ip)}: ${describeParseFailure(code)}`);
  const headers: Record<string, string> = {};
  for (const pair of values.header ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--header ${JSON.stringify(pair)} must be name=value`);
    headers[pair.slice(0, eq).trim().toLowerCase()] = pair.slice(eq + 1);
  }
  const [path, queryInPath = ''] = splitQuery(values.path);
  const snapshot = await openOrExplain(snapshotPath);
  try {
    const decision = new Evaluator(snapshot).evaluate({
      ip,
      method: values.method,
      host: values.host,
      path,
      query: values.query ?? queryInPath,
      userAgent: values.ua ?? headers['user-agent'] ?? '',
      headers: { ...headers, ...(values.ua === undefined ? {} : { 'user-agent': values.ua }) },
    });
    io.stdout.write(`${JSON.stringify(decision)}\n`);
  } finally {
    snapshot.close();
  }
}

function splitQuery(path: string): [string, string?] {
  const q = path.indexOf('?');
  return q === -1 ? [path] : [path.slice(0, q), path.slice(q + 1)];
}
