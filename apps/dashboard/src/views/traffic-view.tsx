/**
 * What the WAF did over a chosen window: requests per minute by outcome, the totals, and the top
 * addresses, rules, countries, AS numbers, paths and user agents for one outcome. Reloads every
 * 5 seconds, so reports show up as they arrive.
 */
import { useState } from 'preact/hooks';
import { api, queryString, sitePath } from '../api/hub-api.ts';
import type { Dimension, TopEntry, Traffic } from '../api/hub-types.ts';
import { InstallHelp } from '../components/install-help.tsx';
import { CLASSES, chartData, TrafficChart } from '../components/traffic-chart.tsx';
import { usePolling } from '../hooks/use-polling.ts';

const WINDOWS = [
  { minutes: 15, label: '15 minutes' },
  { minutes: 60, label: 'hour' },
  { minutes: 360, label: '6 hours' },
  { minutes: 1440, label: '24 hours' },
] as const;

const DIMENSIONS: readonly { key: Dimension; label: string }[] = [
  { key: 'ip', label: 'Addresses' },
  { key: 'rule', label: 'Rules' },
  { key: 'country', label: 'Countries' },
  { key: 'asn', label: 'AS numbers' },
  { key: 'path', label: 'Paths' },
  { key: 'user_agent', label: 'User agents' },
];

const OUTCOMES = [
  { key: 'blocked', label: 'blocked' },
  { key: 'rate_limited', label: 'rate limited' },
  { key: 'passed', label: 'passed (with what monitor-mode rules let through)' },
  { key: '', label: 'any outcome' },
] as const;

interface Snapshot {
  readonly traffic: Traffic;
  readonly top: Readonly<Record<Dimension, readonly TopEntry[]>>;
}

export function TrafficView({ siteId }: { siteId: string }) {
  const [minutes, setMinutes] = useState<number>(60);
  const [outcome, setOutcome] = useState<string>('blocked');

  const polled = usePolling<Snapshot>(
    async () => {
      const to = new Date();
      const from = new Date(to.getTime() - minutes * 60_000);
      const window = { from: from.toISOString(), to: to.toISOString() };
      const [traffic, ...tops] = await Promise.all([
        api<Traffic>('GET', sitePath(siteId, `/traffic${queryString(window)}`)),
        ...DIMENSIONS.map((d) =>
          api<TopEntry[]>(
            'GET',
            sitePath(
              siteId,
              `/traffic/top${queryString({ ...window, dimension: d.key, limit: 10, outcome: outcome || undefined })}`,
            ),
          ),
        ),
      ]);
      // Object.fromEntries cannot know that every dimension is there; DIMENSIONS lists them all.
      const top = Object.fromEntries(DIMENSIONS.map((d, i) => [d.key, tops[i] ?? []])) as Record<
        Dimension,
        TopEntry[]
      >;
      return { traffic, top };
    },
    5000,
    [siteId, minutes, outcome],
  );

  const snapshot = polled.data;
  const totals = CLASSES.map((c) => ({
    ...c,
    count: snapshot?.traffic.minutes.reduce((sum, m) => sum + m[c.key], 0) ?? 0,
  }));
  const empty = snapshot !== undefined && totals.every((t) => t.count === 0);

  return (
    <div>
      <div class="toolbar">
        <label for="window">Last</label>
        <select
          id="window"
          value={minutes}
          onChange={(e) => setMinutes(Number(e.currentTarget.value))}
        >
          {WINDOWS.map((w) => (
            <option key={w.minutes} value={w.minutes}>
              {w.label}
            </option>
          ))}
        </select>
        {polled.error && <span class="field-error">Not updated: {polled.error}</span>}
      </div>
      {snapshot === undefined ? (
        <p class="loading">Loading…</p>
      ) : empty ? (
        <div class="empty">
          <p>No requests reported in this window.</p>
          <InstallHelp siteId={siteId} />
        </div>
      ) : null}
      {snapshot && (
        <>
          <ul class="totals" aria-label="Requests in the window">
            {totals.map((t) => (
              <li key={t.key} data-class={t.key}>
                <span class="swatch" data-class={t.key} />
                {t.label}: <strong>{t.count.toLocaleString()}</strong>
              </li>
            ))}
          </ul>
          <TrafficChart
            data={chartData(snapshot.traffic.minutes, snapshot.traffic.from, snapshot.traffic.to)}
          />
          <div class="toolbar">
            <label for="outcome">Top lists of requests</label>
            <select
              id="outcome"
              value={outcome}
              onChange={(e) => setOutcome(e.currentTarget.value)}
            >
              {OUTCOMES.map((o) => (
                <option key={o.key} value={o.key}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
          <div class="tops">
            {DIMENSIONS.map((d) => (
              <TopList
                key={d.key}
                title={d.label}
                dimension={d.key}
                entries={snapshot.top[d.key]}
              />
            ))}
          </div>
        </>
      )}
    </div>
  );
}

function TopList({
  title,
  dimension,
  entries,
}: {
  title: string;
  dimension: Dimension;
  entries: readonly TopEntry[];
}) {
  return (
    <figure class="top" data-dimension={dimension}>
      <figcaption>{title}</figcaption>
      {entries.length === 0 ? (
        <p class="empty">none</p>
      ) : (
        <ol>
          {entries.map((e) => (
            <li key={e.value}>
              <span class="value">{e.value === '' ? '(empty)' : e.value}</span>
              <span class="count">{e.count.toLocaleString()}</span>
            </li>
          ))}
        </ol>
      )}
    </figure>
  );
}
