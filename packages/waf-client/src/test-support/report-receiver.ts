/**
 * A real HTTP receiver for report batches (the hub's ingestion is a later issue): gunzips and
 * parses every POST, and answers with a scripted sequence of statuses (then 200).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { ReportBatch } from '../reports/report-flusher.js';

export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

export interface ReportReceiver {
  readonly url: string;
  /** Batches answered 2xx, parsed. */
  readonly batches: ReportBatch[];
  /** The raw (gzip) bodies of those batches, as they crossed the wire. */
  readonly bodies: Buffer[];
  /** Every attempt: status answered, time received, headers. */
  readonly attempts: {
    status: number;
    at: number;
    /** The attempt's batch id (the same across the retries of one batch). */
    batchId: string;
    encoding: string | undefined;
    authorization: string | undefined;
    contentType: string | undefined;
  }[];
  /** Answers for the next requests, consumed in order. */
  readonly script: ScriptedAnswer[];
  close(): Promise<void>;
}

export async function startReportReceiver(): Promise<ReportReceiver> {
  const receiver: ReportReceiver = {
    url: '',
    batches: [],
    bodies: [],
    attempts: [],
    script: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = receiver.script.shift() ?? { status: 200 };
      const batch = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString('utf8')) as ReportBatch;
      receiver.attempts.push({
        status: answer.status,
        at: Date.now(),
        batchId: batch.batchId,
        encoding: req.headers['content-encoding'],
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
      });
      if (answer.status >= 200 && answer.status < 300) {
        receiver.batches.push(batch);
        receiver.bodies.push(Buffer.concat(chunks));
      }
      res.writeHead(answer.status, answer.headers ?? {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { url: string }).url =
    `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/reports`;
  return receiver;
}
