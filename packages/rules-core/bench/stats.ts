/**
 * Summary statistics for benchmark samples. Pure functions; none of them modifies its input.
 *
 * Percentiles use the nearest-rank definition (the smallest sample with at least p% of the
 * samples at or below it), so a reported p99 is always a duration that was actually measured.
 */

type Samples = ArrayLike<number>;

/** Arithmetic mean; NaN for no samples. */
export function mean(samples: Samples): number {
  if (samples.length === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] as number;
  return sum / samples.length;
}

/** An ascending copy, as a Float64Array (numeric sort, no string comparison). */
export function sortedCopy(samples: Samples): Float64Array {
  return Float64Array.from(samples).sort();
}

/** Nearest-rank percentile `p` (0 < p <= 100) of samples already sorted ascending. */
export function percentileOfSorted(sorted: Samples, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] as number;
}

/** Nearest-rank percentile `p` of unsorted samples. */
export function percentile(samples: Samples, p: number): number {
  return percentileOfSorted(sortedCopy(samples), p);
}

/** The 50th percentile (nearest rank: the lower middle sample for an even count). */
export function median(samples: Samples): number {
  return percentile(samples, 50);
}

/** The 99th percentile. */
export function p99(samples: Samples): number {
  return percentile(samples, 99);
}

export interface Summary {
  readonly count: number;
  readonly mean: number;
  readonly median: number;
  readonly p99: number;
  readonly max: number;
}

/** Mean, median, p99 and max in one sort. */
export function summarize(samples: Samples): Summary {
  const sorted = sortedCopy(samples);
  return {
    count: sorted.length,
    mean: mean(sorted),
    median: percentileOfSorted(sorted, 50),
    p99: percentileOfSorted(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}
