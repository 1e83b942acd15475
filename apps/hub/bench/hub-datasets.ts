/**
 * Loading a bench hub with the public datasets through its API, shared by `sync.ts` and
 * `ingest.ts`: both measure a hub that holds the full country and ASN ranges, as in production.
 */
import { readFileSync } from 'node:fs';
import type { Hub } from '@rampart/test-services/hub';

/** `PUT /v1/datasets/:kind/:name` with `body` as CSV; throws with the hub's answer otherwise. */
export async function uploadDataset(
  hub: Hub,
  kind: string,
  name: string,
  body: Buffer | string,
): Promise<void> {
  const response = await fetch(`${hub.url}/v1/datasets/${kind}/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${hub.adminToken}`, 'content-type': 'text/csv' },
    body,
    signal: AbortSignal.timeout(600_000),
  });
  if (response.status >= 300)
    throw new Error(`upload ${kind}/${name}: ${response.status} ${await response.text()}`);
}

/** A dataset file's content, or only its first `lines` lines (a quick run). */
export function datasetBody(file: string, lines: number | undefined): Buffer {
  const text = readFileSync(file);
  if (lines === undefined) return text;
  return Buffer.from(`${text.toString('utf8').split('\n').slice(0, lines).join('\n')}\n`);
}
