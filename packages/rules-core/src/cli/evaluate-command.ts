/**
 * `rampart evaluate`: one request against a snapshot, the decision printed as JSON.
 */

import { Evaluator } from '../evaluator/evaluator.js';
import { describeParseFailure, parseIpInto } from '../ip/address.js';
import { type CliIo, usageError } from './cli-error.js';
import { parseOptions, required } from './parse-options.js';
import { openOrExplain } from './snapshot-inspect-command.js';

export async function evaluateCommand(argv: readonly string[], io: CliIo): Promise<void> {
  const { values } = parseOptions(argv, {
    snapshot: { type: 'string' },
    ip: { type: 'string' },
    method: { type: 'string', default: 'GET' },
    host: { type: 'string', default: 'localhost' },
    path: { type: 'string', default: '/' },
    query: { type: 'string' },
    ua: { type: 'string' },
    header: { type: 'string', multiple: true },
  });
  const snapshotPath = required(values.snapshot, 'snapshot');
  const ip = required(values.ip, 'ip');
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
