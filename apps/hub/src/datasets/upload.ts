/**
 * Streams a request body to a file without holding it in memory, hashing it on the way and
 * stopping at a size limit.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class UploadTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the upload exceeds the limit of ${limit} bytes`);
    this.name = 'UploadTooLargeError';
  }
}

export interface StoredUpload {
  readonly bytes: number;
  readonly sha256: string;
}

/** Copies `body` to `path`; rejects with {@link UploadTooLargeError} past `limit` bytes. */
export async function streamToFile(
  body: NodeJS.ReadableStream,
  path: string,
  limit: number,
): Promise<StoredUpload> {
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > limit) return callback(new UploadTooLargeError(limit));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(body, meter, createWriteStream(path));
  return { bytes, sha256: hash.digest('hex') };
}
