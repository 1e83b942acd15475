/**
 * Sliding-window counters in Redis, shared by every hub instance (any instance's worker may take
 * any batch, so a per-process count would see a fraction of an attack).
 *
 * A window of W is kept as {@link BUCKETS} buckets of W/10, each a Redis hash (subject -> count)
 * that expires when it leaves the window; a total is the sum of the buckets the window covers,
 * so it is exact to within one bucket (10% of the window) at its older edge. One pipelined round
 * trip per call, whatever the number of subjects.
 *
 * Distinct members (the addresses that failed on one account) are sorted sets scored by time,
 * trimmed to the window and to {@link MAX_MEMBERS}. Samples (request ids for the evidence) are
 * capped lists.
 */
import type { Redis } from 'ioredis';

export const BUCKETS = 10;
/** Distinct members kept per subject (the addresses an account was tried from). */
export const MAX_MEMBERS = 1000;
/** Request ids kept per subject as evidence. */
export const MAX_SAMPLES = 10;

const PREFIX = 'rampart:detect';

export class WindowCounters {
  constructor(private readonly redis: Redis) {}

  /**
   * Adds `amounts` (subject -> increment) to `series` and returns each subject's total over the
   * last `windowMs`.
   */
  async add(
    series: string,
    windowMs: number,
    amounts: ReadonlyMap<string, number>,
    now: number,
  ): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    if (amounts.size === 0) return totals;
    const bucketMs = Math.max(1, Math.ceil(windowMs / BUCKETS));
    const current = Math.floor(now / bucketMs);
    const key = (bucket: number) => `${PREFIX}:${series}:${bucketMs}:${bucket}`;
    const pipeline = this.redis.pipeline();
    for (const [subject, amount] of amounts) pipeline.hincrby(key(current), subject, amount);
    // Kept one bucket past the window, so the oldest bucket counted is still there.
    pipeline.pexpire(key(current), bucketMs * (BUCKETS + 1));
    const subjects = [...amounts.keys()];
    for (let b = current - BUCKETS + 1; b <= current; b++) pipeline.hmget(key(b), ...subjects);
    const results = await exec(pipeline);
    for (const subject of subjects) totals.set(subject, 0);
    for (const [, values] of results.slice(amounts.size + 1) as [unknown, (string | null)[]][])
      values.forEach((value, i) => {
        const subject = subjects[i] as string;
        totals.set(subject, (totals.get(subject) ?? 0) + Number(value ?? 0));
      });
    return totals;
  }

  /**
   * Records `members` (subject -> members seen now) in `series` and returns each subject's
   * number of distinct members over the last `windowMs`.
   */
  async distinct(
    series: string,
    windowMs: number,
    members: ReadonlyMap<string, ReadonlySet<string>>,
    now: number,
  ): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (members.size === 0) return counts;
    const pipeline = this.redis.pipeline();
    const subjects = [...members.keys()];
    for (const [subject, seen] of members) {
      const key = `${PREFIX}:${series}:set:${subject}`;
      pipeline.zadd(key, ...[...seen].flatMap((m) => [now, m]));
      pipeline.zremrangebyscore(key, '-inf', now - windowMs);
      pipeline.zremrangebyrank(key, 0, -MAX_MEMBERS - 1); // the oldest beyond the cap
      pipeline.pexpire(key, windowMs);
      pipeline.zcard(key);
    }
    const results = await exec(pipeline);
    subjects.forEach((subject, i) => {
      counts.set(subject, Number(results[i * 5 + 4]?.[1] ?? 0));
    });
    return counts;
  }

  /** The distinct members of `subject` in `series`, newest first. */
  async members(series: string, subject: string): Promise<string[]> {
    return this.redis.zrevrange(`${PREFIX}:${series}:set:${subject}`, 0, MAX_MEMBERS - 1);
  }

  /** Keeps the newest {@link MAX_SAMPLES} of `ids` per subject, for `ttlMs`. */
  async sample(
    series: string,
    ids: ReadonlyMap<string, readonly string[]>,
    ttlMs: number,
  ): Promise<void> {
    if (ids.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [subject, list] of ids) {
      if (list.length === 0) continue;
      const key = `${PREFIX}:${series}:sample:${subject}`;
      pipeline.lpush(key, ...list.slice(-MAX_SAMPLES));
      pipeline.ltrim(key, 0, MAX_SAMPLES - 1);
      pipeline.pexpire(key, ttlMs);
    }
    await exec(pipeline);
  }

  async samples(series: string, subject: string): Promise<string[]> {
    return this.redis.lrange(`${PREFIX}:${series}:sample:${subject}`, 0, MAX_SAMPLES - 1);
  }

  /**
   * Claims `key` for `ttlMs` (true) unless it is claimed already (false): one finding per
   * subject while its block stands, across every hub instance.
   */
  async claim(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${PREFIX}:claim:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Releases a claim (the block was revoked: the detector may fire again). */
  async release(key: string): Promise<void> {
    await this.redis.del(`${PREFIX}:claim:${key}`);
  }
}

type PipelineResults = [Error | null, unknown][];

async function exec(pipeline: ReturnType<Redis['pipeline']>): Promise<PipelineResults> {
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error !== null);
  if (failed) throw failed[0] as Error;
  return results as PipelineResults;
}
