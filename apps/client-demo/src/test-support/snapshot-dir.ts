/**
 * Places a snapshot in a WAF client's data directory exactly as the client's own sync leaves it,
 * using the client's own store (`@rampart/waf-client/sync/snapshot-store`), so the layout cannot
 * drift: the file at its content address and the pointer `current.json` naming it, tagged with
 * the site key's fingerprint. A client started on that directory with the same site key
 * verifies the file and uses it at once, before it has spoken to any hub.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { GuardedLogger } from '@rampart/waf-client/logging/logger';
import { SnapshotStore, siteFingerprint } from '@rampart/waf-client/sync/snapshot-store';

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Installs `file` (a snapshot of `version`) as the current snapshot of `siteKey` in `dataDir`. */
export async function installSnapshot(
  dataDir: string,
  file: string,
  version: number,
  siteKey: string,
): Promise<string> {
  const store = new SnapshotStore(dataDir, new GuardedLogger(console, siteKey));
  await store.prepare();
  const sha256 = await sha256OfFile(file);
  const temporary = store.tempPath();
  await copyFile(file, temporary);
  await store.publish(temporary, sha256);
  await store.writePointer({ sha256, version, site: siteFingerprint(siteKey) });
  return sha256;
}
