/**
 * The interleaved latency client (see `interleaved-latency.ts`), run as its own process:
 * `node interleaved-client.js PARAMS.json`. One keep-alive connection, one request at a time,
 * each timed from its write to the last byte of its response; variants alternate as
 * `variantOf` says. Prints one line `INTERLEAVED_JSON {...}`; exits non-zero on a connection
 * error or a malformed response.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  type InterleavedResult,
  type InterleavedRun,
  splitByVariant,
  type Variant,
  variantOf,
} from './interleaved-latency.ts';
import { ResponseFramer } from './response-framer.ts';
import { WAF_VARIANT_HEADER } from './turn-deferral.ts';
import { BROWSER_HEADERS } from './wrk.ts';

function requestBytes(host: string, path: string, ip: string, variant: Variant): Buffer {
  const headers = {
    ...BROWSER_HEADERS,
    Host: host,
    'X-Forwarded-For': ip,
    [WAF_VARIANT_HEADER]: variant,
  };
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  return Buffer.from(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

function run(params: InterleavedRun): Promise<InterleavedResult> {
  const url = new URL(params.url);
  const total = params.warmup + params.requests;
  // Request k uses address k >> 1 (in turn): both variants of a pair see the same addresses.
  const requests = Array.from({ length: Math.min(total, 4 * params.ips.length) }, (_, k) =>
    requestBytes(
      url.host,
      params.path,
      params.ips[(k >> 1) % params.ips.length] as string,
      variantOf(k),
    ),
  );
  const latencies = new Float64Array(params.requests);
  const framer = new ResponseFramer();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    let k = 0;
    let sentAt = 0;
    let errors = 0;
    let started = 0;
    const send = () => {
      sentAt = performance.now();
      socket.write(requests[k % requests.length] as Buffer);
    };
    socket.once('connect', () => {
      started = performance.now();
      send();
    });
    socket.on('data', (chunk: Buffer) => {
      let statuses: number[];
      try {
        statuses = framer.feed(chunk);
      } catch (error) {
        socket.destroy();
        reject(error);
        return;
      }
      if (statuses.length === 0) return;
      const elapsed = performance.now() - sentAt;
      if (statuses.length > 1) {
        socket.destroy();
        reject(new Error(`${statuses.length} responses to one request`));
        return;
      }
      if ((statuses[0] as number) >= 300) errors++;
      if (k === params.warmup) started = performance.now() - elapsed;
      if (k >= params.warmup) latencies[k - params.warmup] = elapsed;
      k++;
      if (k < total) {
        send();
        return;
      }
      const durationS = (performance.now() - started) / 1000;
      socket.end();
      resolve({
        requests: params.requests,
        durationS,
        ...splitByVariant(latencies, params.warmup),
        errors,
      });
    });
    socket.once('error', reject);
    socket.once('close', () => {
      if (k < total) reject(new Error(`the connection closed after ${k} of ${total} requests`));
    });
  });
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: interleaved-client.js PARAMS.json\n');
  process.exit(2);
}
run(JSON.parse(readFileSync(file, 'utf8')) as InterleavedRun).then(
  (result) => process.stdout.write(`INTERLEAVED_JSON ${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(
      `interleaved client: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
