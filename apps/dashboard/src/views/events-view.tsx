/** Recent blocked and monitored requests (and sampled passes), filterable, newest first, paged. */
import { useState } from 'preact/hooks';
import { api, queryString, sitePath } from '../api/hub-api.ts';
import type { ReportEvent } from '../api/hub-types.ts';
import { TraceWaterfall } from '../components/trace-waterfall.tsx';
import { usePolling } from '../hooks/use-polling.ts';

interface Filter {
  outcome: string;
  mode: string;
  ruleId: string;
  ip: string;
}

const PAGE = 50;

export function EventsView({ siteId }: { siteId: string }) {
  const [filter, setFilter] = useState<Filter>({ outcome: '', mode: '', ruleId: '', ip: '' });
  const [before, setBefore] = useState<string>();
  const [shownTrace, setShownTrace] = useState<string>();
  const events = usePolling(
    () =>
      api<ReportEvent[]>(
        'GET',
        sitePath(siteId, `/events${queryString({ ...filter, before, limit: PAGE })}`),
      ),
    before ? 3_600_000 : 5000, // an older page does not change
    [siteId, filter, before],
  );
  const set = (change: Partial<Filter>) => {
    setBefore(undefined);
    setFilter({ ...filter, ...change });
  };

  return (
    <div>
      <form class="toolbar" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <label for="ev-outcome">Outcome</label>
        <select
          id="ev-outcome"
          value={filter.outcome}
          onChange={(e) => set({ outcome: e.currentTarget.value })}
        >
          <option value="">any</option>
          <option value="blocked">blocked</option>
          <option value="rate_limited">rate limited</option>
          <option value="passed">passed</option>
          <option value="failed_open">failed open</option>
          <option value="failed_closed">failed closed</option>
        </select>
        <label for="ev-mode">Mode</label>
        <select
          id="ev-mode"
          value={filter.mode}
          onChange={(e) => set({ mode: e.currentTarget.value })}
        >
          <option value="">any</option>
          <option value="enforce">enforce</option>
          <option value="monitor">monitor</option>
        </select>
        <label for="ev-rule">Rule</label>
        <input
          id="ev-rule"
          value={filter.ruleId}
          onChange={(e) => set({ ruleId: e.currentTarget.value.trim() })}
        />
        <label for="ev-ip">Address</label>
        <input
          id="ev-ip"
          value={filter.ip}
          onChange={(e) => set({ ip: e.currentTarget.value.trim() })}
        />
      </form>
      {events.error && <p class="field-error">{events.error}</p>}
      {events.data === undefined ? (
        <p class="loading">Loading…</p>
      ) : events.data.length === 0 ? (
        <p class="empty">
          No events match. Clients report every refused or monitored request, and a sample of the
          rest.
        </p>
      ) : (
        <>
          <table class="events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Outcome</th>
                <th scope="col">Rule</th>
                <th scope="col">Client</th>
                <th scope="col">Request</th>
                <th scope="col">User agent</th>
                <th scope="col">Request id</th>
                <th scope="col">Snapshot</th>
                <th scope="col">Trace</th>
              </tr>
            </thead>
            <tbody>
              {events.data.map((e) => (
                <tr key={`${e.requestId}/${e.time}`}>
                  <td>{new Date(e.time).toLocaleTimeString()}</td>
                  <td>
                    {e.outcome}
                    {e.mode === 'monitor' ? ' (monitor)' : ''}
                  </td>
                  <td>{e.ruleId ?? e.monitoredRuleId ?? ''}</td>
                  <td>
                    {e.ip}
                    <p class="note">
                      {[e.country, e.asn === null ? null : `AS${e.asn}`]
                        .filter(Boolean)
                        .join(' · ')}
                    </p>
                  </td>
                  <td class="path">
                    {e.method} {e.host}
                    {e.path}
                  </td>
                  <td class="ua">{e.userAgent}</td>
                  <td>
                    <code>{e.requestId}</code>
                  </td>
                  <td>{e.snapshotVersion === null ? '' : `v${e.snapshotVersion}`}</td>
                  <td>
                    {e.traceId && (
                      <button
                        type="button"
                        class="quiet"
                        aria-pressed={shownTrace === e.traceId}
                        onClick={() =>
                          setShownTrace(
                            shownTrace === e.traceId ? undefined : (e.traceId ?? undefined),
                          )
                        }
                      >
                        {shownTrace === e.traceId ? 'Hide' : 'Show'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {shownTrace && <TraceWaterfall siteId={siteId} traceId={shownTrace} />}
          <div class="actions">
            {before && (
              <button type="button" class="quiet" onClick={() => setBefore(undefined)}>
                Newest
              </button>
            )}
            {events.data.length === PAGE && (
              <button
                type="button"
                class="quiet"
                onClick={() => setBefore(events.data?.at(-1)?.time)}
              >
                Older
              </button>
            )}
          </div>
        </>
      )}
    </div>
  );
}
