/**
 * Requests per minute by outcome, stacked as uPlot draws them (a canvas; no markup from data).
 * Minutes without traffic are zeros, so the time axis is the whole window.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { TrafficClass, TrafficMinute } from '../api/hub-types.ts';

export const CLASSES: readonly { key: TrafficClass; label: string; color: string }[] = [
  { key: 'blocked', label: 'blocked', color: '#c0392b' },
  { key: 'rate_limited', label: 'rate limited', color: '#d68910' },
  { key: 'monitored', label: 'monitored', color: '#7d3c98' },
  { key: 'allowed', label: 'allowed', color: '#1e8449' },
  { key: 'passed', label: 'passed', color: '#2e86c1' },
  { key: 'unevaluated', label: 'unevaluated', color: '#7f8c8d' },
];

/** One value per minute of `[from, to)` for each class, and the minutes (epoch seconds). */
export function chartData(minutes: readonly TrafficMinute[], from: string, to: string): number[][] {
  const byMinute = new Map(minutes.map((m) => [Date.parse(`${m.minute}:00Z`) / 1000, m]));
  const first = Math.floor(Date.parse(from) / 60_000) * 60;
  const last = Math.ceil(Date.parse(to) / 60_000) * 60 - 60;
  const xs: number[] = [];
  for (let t = first; t <= last; t += 60) xs.push(t);
  return [xs, ...CLASSES.map((c) => xs.map((t) => byMinute.get(t)?.[c.key] ?? 0))];
}

export function TrafficChart({ data }: { data: number[][] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const chart = new uPlot(
      {
        width: element.clientWidth || 600,
        height: 260,
        scales: { x: { time: true } },
        axes: [{}, { label: 'requests / minute' }],
        series: [
          {},
          ...CLASSES.map((c) => ({
            label: c.label,
            stroke: c.color,
            width: 2,
            points: { show: false },
          })),
        ],
      },
      data as uPlot.AlignedData,
      element,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: element.clientWidth, height: 260 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  return <div class="chart" ref={box} role="img" aria-label="Requests per minute by outcome" />;
}
