/**
 * The anchor's range tables in Redis sorted sets (the v1 design the seed measured SQLite
 * against), with ioredis.
 *
 * Each table is one sorted set whose members all have score 0, so Redis orders them by their
 * bytes; the members are exactly those of the SQLite tables (`wafris-layout.ts`). A lookup is the
 * v1 Lua client's pair of commands per table, `ZRANGEBYLEX key [addr + LIMIT 0 1` and
 * `ZREVRANGEBYLEX key [addr - LIMIT 0 1`. Commands are pipelined `batch` IPs per network round
 * trip; the harness divides the elapsed time by the number of IPs (see `measure.ts` for which
 * batch size is the peer).
 */
import type { Redis } from 'ioredis';
import { ipToLexicalDecimal } from './lexical-decimal.ts';
import { matchNeighbours, tableMembers } from './wafris-layout.ts';
import type { WafrisTable } from './wafris-sqlite.ts';

/** Members per ZADD and ZADDs per pipeline while loading: about 5 MB in flight at a time. */
const MEMBERS_PER_ZADD = 1000;
const ZADDS_PER_EXEC = 100;

/** Default IPs per lookup pipeline (each IP is two commands per table). */
export const DEFAULT_LOOKUP_BATCH = 1000;

/** Replaces the sorted set named after each table with that table's members. */
export async function loadWafrisRedis(redis: Redis, tables: readonly WafrisTable[]): Promise<void> {
  for (const table of tables) {
    await redis.del(table.name);
    await addMembers(redis, table.name, tableMembers(table.ranges));
  }
}

async function addMembers(redis: Redis, key: string, members: readonly string[]): Promise<void> {
  let pipeline = redis.pipeline();
  let queued = 0;
  for (let from = 0; from < members.length; from += MEMBERS_PER_ZADD) {
    pipeline.call('ZADD', key, ...zaddArgs(members, from, from + MEMBERS_PER_ZADD));
    if (++queued === ZADDS_PER_EXEC) {
      await execChecked(pipeline);
      pipeline = redis.pipeline();
      queued = 0;
    }
  }
  if (queued > 0) await execChecked(pipeline);
}

/** `0 m0 0 m1 ...` for members[from, to). */
function zaddArgs(members: readonly string[], from: number, to: number): string[] {
  const args: string[] = [];
  for (let i = from; i < Math.min(to, members.length); i++) args.push('0', members[i] as string);
  return args;
}

type PipelineResult = [error: Error | null, result: unknown][] | null;

async function execChecked(pipeline: { exec(): Promise<PipelineResult> }): Promise<unknown[]> {
  const results = await pipeline.exec();
  if (!results) throw new Error('Redis pipeline was discarded');
  return results.map(([error, result]) => {
    if (error) throw error;
    return result;
  });
}

/**
 * Looks every IP of `ips` up in every table, writing the matched range id (or -1) of IP `i` and
 * table `t` to `out[i * tables.length + t]`.
 */
export async function lookupWafrisRedis(
  redis: Redis,
  tables: readonly string[],
  ips: readonly string[],
  out: Int32Array,
  batch = DEFAULT_LOOKUP_BATCH,
): Promise<void> {
  for (let from = 0; from < ips.length; from += batch) {
    const to = Math.min(from + batch, ips.length);
    const pipeline = redis.pipeline();
    for (let i = from; i < to; i++) {
      const key = `[${ipToLexicalDecimal(ips[i] as string)}`;
      for (const table of tables) {
        pipeline.zrangebylex(table, key, '+', 'LIMIT', 0, 1);
        pipeline.zrevrangebylex(table, key, '-', 'LIMIT', 0, 1);
      }
    }
    const replies = (await execChecked(pipeline)) as string[][];
    readMatches(replies, from, tables.length, out);
  }
}

/** Turns pairs of replies (above, below) into ids, starting at IP `from`. */
function readMatches(
  replies: readonly string[][],
  from: number,
  tableCount: number,
  out: Int32Array,
): void {
  for (let r = 0; r < replies.length; r += 2) {
    const above = (replies[r] as string[])[0];
    const below = (replies[r + 1] as string[])[0];
    out[from * tableCount + r / 2] = matchNeighbours(above, below);
  }
}
