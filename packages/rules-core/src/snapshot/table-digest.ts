/**
 * The content digest of one range table, stored in a snapshot's meta table so a reader holding
 * the previous snapshot can tell that a table did not change and keep the copy it has.
 *
 * Most new snapshots differ from the last one by rules only (an operator's edit, a temporary
 * block); the country, ASN and reputation tables are then byte for byte the same. Loading them
 * again would mean reading and copying tens of megabytes into new buffers, and on a busy server
 * that much new off-heap memory makes V8 collect garbage in pauses of 10-30 ms. With the digest
 * the reader shares the unchanged (immutable) arrays instead.
 */
import { createHash } from 'node:crypto';
import type { RangeTable } from '../ip/range-table.js';

/** SHA-256 over every array of the table, each preceded by its length. */
export function tableDigest(table: RangeTable): string {
  const hash = createHash('sha256');
  const arrays = [
    table.v4Starts,
    table.v4Ends,
    table.v4Sets,
    table.v6Starts,
    table.v6Ends,
    table.v6Sets,
    table.setOffsets,
    table.setLabels,
  ];
  const length = Buffer.alloc(8);
  for (const array of arrays) {
    length.writeBigUInt64LE(BigInt(array.length));
    hash.update(length);
    hash.update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }
  return hash.digest('hex');
}
