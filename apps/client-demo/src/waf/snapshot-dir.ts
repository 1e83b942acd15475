/**
 * Places a snapshot in a WAF client's data directory the way the client's own sync leaves it
 * (see `@rampart/waf-client/sync/snapshot-store`): the file at `snapshots/<sha256>.sqlite` and
 * the pointer `current.json` naming it. A client started on that directory verifies the file
 * and uses it at once, before it has spoken to any hub.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function installSnapshot(
  dataDir: string,
  file: string,
  version: number,
): Promise<string> {
  const sha256 = await sha256OfFile(file);
  const snapshots = join(dataDir, 'snapshots');
  await mkdir(snapshots, { recursive: true });
  await copyFile(file, join(snapshots, `${sha256}.sqlite`));
  const pointer = join(dataDir, 'current.json');
  await writeFile(`${pointer}.tmp`, `${JSON.stringify({ sha256, version })}\n`);
  await rename(`${pointer}.tmp`, pointer);
  return sha256;
}
