import { describe, expect, it } from 'vitest';
import { mean, median, p99, percentile, summarize } from './stats.ts';

describe('stats', () => {
  const samples = Float64Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted

  it('uses nearest-rank percentiles over a numeric sort', () => {
    expect(median(samples)).toBe(50);
    expect(p99(samples)).toBe(99);
    expect(percentile(samples, 100)).toBe(100);
    expect(median([10, 9, 100])).toBe(10); // not a string sort
  });

  it('averages and summarises without modifying the input', () => {
    expect(mean([1, 2, 3, 6])).toBe(3);
    expect(summarize(samples)).toEqual({ count: 100, mean: 50.5, median: 50, p99: 99, max: 100 });
    expect(samples[0]).toBe(100);
  });

  it('reports NaN for no samples and rejects impossible percentiles', () => {
    expect(mean([])).toBeNaN();
    expect(median([])).toBeNaN();
    expect(() => percentile([1], 0)).toThrow(RangeError);
  });
});
