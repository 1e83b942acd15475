/**
 * A file cache for the benchmark's expensive builds (the Wafris SQLite tables, the Rampart
 * snapshot), in `packages/rules-core/.bench-cache/` (git-ignored).
 *
 * Entries are named by a key that covers everything the file is built from (dataset package
 * versions, layout version, rule-set hash), so a stale file is never reused, only orphaned; delete
 * the folder to reclaim the space. A file is built under a temporary name in the same folder and
 * renamed into place, so an interrupted build leaves no entry that looks complete.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `packages/rules-core/.bench-cache/`, created on first use. */
export function benchCacheDir(): string {
  const dir = fileURLToPath(new URL('../.bench-cache/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A short, file-name-safe digest of `parts`. */
export function cacheDigest(...parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export interface CachedFile {
  readonly path: string;
  /** True when this call built the file, false when it was already there. */
  readonly built: boolean;
}

/**
 * Returns the path of cache entry `name`, first running `build(temporaryPath)` when it does not
 * exist yet. `build` must write the file at the path it is given.
 */
export async function cachedFile(
  name: string,
  build: (temporaryPath: string) => void | Promise<void>,
): Promise<CachedFile> {
  const path = join(benchCacheDir(), name);
  if (existsSync(path)) return { path, built: false };
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  try {
    await build(temporary);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
  return { path, built: true };
}
