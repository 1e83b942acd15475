/**
 * Page deltas between two snapshot files, in the spirit of SQLite's `sqlite3_rsync`: the pages of
 * the new file that differ from the old one, and the new length.
 *
 * A snapshot is an SQLite file of fixed-size pages, and the writer (`writer.ts`) lays the range
 * tables out first, in a fixed order, so a change that leaves them alone (a rule edit, an
 * automatic block) rewrites only the pages after them and a few B-tree pages. The hub serves
 * such a delta against a version the client names; the client rebuilds the whole file from the
 * one it holds and checks the rebuilt file's SHA-256, exactly as it checks a full download. The
 * format needs nothing of SQLite but the page size; correctness never depends on the layout, only
 * the delta's size does.
 *
 * Format, integers little-endian:
 *
 * | bytes | field |
 * | --- | --- |
 * | 8 | magic `RPDELTA1` |
 * | 4 | page size (a power of two, 512 to 65536) |
 * | 4 | the new file's page count |
 * | 32 | SHA-256 of the base file |
 * | 32 | SHA-256 of the new file |
 * | 4 | how many pages follow |
 * | n x (4 + page size) | each: its page number (from 0, ascending), its bytes |
 *
 * Every page past the end of the base file is carried; a page the base has and the new file
 * does not is dropped by the new page count.
 */
import { createHash } from 'node:crypto';

const MAGIC = Buffer.from('RPDELTA1', 'latin1');
/** Where each header field starts (see the table above). */
const AT = { pageSize: 8, pageCount: 12, base: 16, target: 48, pages: 80 } as const;
const HEADER_BYTES = 84;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');
/** Rebuilt files larger than this are refused (snapshots are far smaller). */
export const MAX_DELTA_TARGET_BYTES = 2 ** 31;

/** Why a delta cannot be applied; the caller downloads the whole file instead. */
export class PageDeltaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PageDeltaError';
  }
}

/** What a delta says about itself, read from its header. */
export interface PageDeltaHeader {
  readonly pageSize: number;
  readonly pageCount: number;
  /** Hex SHA-256 of the file the delta applies to. */
  readonly baseSha256: string;
  /** Hex SHA-256 of the file it rebuilds. */
  readonly targetSha256: string;
  /** Pages the delta carries. */
  readonly pages: number;
}

/** The page size an SQLite file declares in its header (bytes 16-17, big-endian; 1 means 64 KiB). */
export function sqlitePageSize(file: Uint8Array): number {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (bytes.length < 100 || !bytes.subarray(0, 16).equals(SQLITE_MAGIC))
    throw new PageDeltaError('not an SQLite file');
  const raw = bytes.readUInt16BE(16);
  const size = raw === 1 ? 65536 : raw;
  if (!validPageSize(size)) throw new PageDeltaError(`invalid SQLite page size ${raw}`);
  return size;
}

function validPageSize(size: number): boolean {
  return size >= 512 && size <= 65536 && (size & (size - 1)) === 0;
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}

function hashOrCompute(hex: string | undefined, bytes: Uint8Array): Buffer {
  if (hex === undefined) return sha256(bytes);
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new PageDeltaError(`invalid SHA-256 "${hex}"`);
  return Buffer.from(hex, 'hex');
}

export interface EncodeOptions {
  /** Default: the page size `target` declares in its SQLite header. */
  readonly pageSize?: number;
  /** Hex SHA-256 of `base`, when the caller knows it (content-addressed files); else computed. */
  readonly baseSha256?: string;
  /** Hex SHA-256 of `target`, likewise. */
  readonly targetSha256?: string;
}

/**
 * The delta that turns `base` into `target`, both whole files; `target`'s length must be a whole
 * number of pages. Hashes given in `options` are written as they are: a wrong one makes every
 * application of the delta fail, never succeed wrongly.
 */
export function encodePageDelta(
  base: Uint8Array,
  target: Uint8Array,
  options: EncodeOptions = {},
): Buffer {
  const pageSize = options.pageSize ?? sqlitePageSize(target);
  if (!validPageSize(pageSize)) throw new PageDeltaError(`invalid page size ${pageSize}`);
  if (target.byteLength % pageSize !== 0)
    throw new PageDeltaError(`the new file is not a whole number of ${pageSize}-byte pages`);
  const from = Buffer.from(base.buffer, base.byteOffset, base.byteLength);
  const to = Buffer.from(target.buffer, target.byteOffset, target.byteLength);
  const pageCount = to.length / pageSize;
  const changed: number[] = [];
  for (let page = 0; page < pageCount; page++) {
    const start = page * pageSize;
    const end = start + pageSize;
    if (end > from.length || !to.subarray(start, end).equals(from.subarray(start, end)))
      changed.push(page);
  }
  const out = Buffer.allocUnsafe(HEADER_BYTES + changed.length * (4 + pageSize));
  MAGIC.copy(out, 0);
  out.writeUInt32LE(pageSize, AT.pageSize);
  out.writeUInt32LE(pageCount, AT.pageCount);
  hashOrCompute(options.baseSha256, from).copy(out, AT.base);
  hashOrCompute(options.targetSha256, to).copy(out, AT.target);
  out.writeUInt32LE(changed.length, AT.pages);
  let at = HEADER_BYTES;
  for (const page of changed) {
    at = out.writeUInt32LE(page, at);
    at += to.copy(out, at, page * pageSize, (page + 1) * pageSize);
  }
  return out;
}

/** Reads and checks a delta's header against its length; throws {@link PageDeltaError}. */
export function readPageDeltaHeader(delta: Uint8Array): PageDeltaHeader {
  const bytes = Buffer.from(delta.buffer, delta.byteOffset, delta.byteLength);
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC))
    throw new PageDeltaError('not a page delta (bad magic or too short)');
  const pageSize = bytes.readUInt32LE(AT.pageSize);
  const pageCount = bytes.readUInt32LE(AT.pageCount);
  const baseSha256 = bytes.toString('hex', AT.base, AT.base + 32);
  const targetSha256 = bytes.toString('hex', AT.target, AT.target + 32);
  const pages = bytes.readUInt32LE(AT.pages);
  if (!validPageSize(pageSize)) throw new PageDeltaError(`invalid page size ${pageSize}`);
  if (pageCount * pageSize > MAX_DELTA_TARGET_BYTES)
    throw new PageDeltaError(`the new file would exceed ${MAX_DELTA_TARGET_BYTES} bytes`);
  if (pages > pageCount)
    throw new PageDeltaError(`${pages} pages carried for a file of ${pageCount}`);
  if (bytes.length !== HEADER_BYTES + pages * (4 + pageSize))
    throw new PageDeltaError(
      `the delta is ${bytes.length} bytes, its header says ${HEADER_BYTES + pages * (4 + pageSize)}`,
    );
  return { pageSize, pageCount, baseSha256, targetSha256, pages };
}

/**
 * Rebuilds the new file from `base` and `delta`. Throws {@link PageDeltaError} when the delta is
 * malformed, was made for another base, leaves a page of the new file unknown, or rebuilds
 * anything but the file it names: a result is always exactly that file.
 */
export function applyPageDelta(base: Uint8Array, delta: Uint8Array): Buffer {
  const header = readPageDeltaHeader(delta);
  const from = Buffer.from(base.buffer, base.byteOffset, base.byteLength);
  if (sha256(from).toString('hex') !== header.baseSha256)
    throw new PageDeltaError('the delta was made for another base file');
  const { pageSize, pageCount } = header;
  const bytes = Buffer.from(delta.buffer, delta.byteOffset, delta.byteLength);
  const out = Buffer.alloc(pageCount * pageSize);
  from.copy(out, 0, 0, Math.min(from.length, out.length));
  const basePages = Math.floor(from.length / pageSize);
  let covered = basePages; // every page from here on must come from the delta
  let previous = -1;
  for (let i = 0, at = HEADER_BYTES; i < header.pages; i++, at += 4 + pageSize) {
    const page = bytes.readUInt32LE(at);
    if (page <= previous || page >= pageCount)
      throw new PageDeltaError(`page ${page} is out of order or beyond the new file`);
    previous = page;
    if (page === covered) covered++;
    bytes.copy(out, page * pageSize, at + 4, at + 4 + pageSize);
  }
  if (covered < pageCount)
    throw new PageDeltaError(
      `page ${covered} of the new file is neither in the base nor the delta`,
    );
  if (sha256(out).toString('hex') !== header.targetSha256)
    throw new PageDeltaError('the rebuilt file does not have the SHA-256 the delta names');
  return out;
}
