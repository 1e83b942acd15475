/** Which instance runs which snapshot version and when it last synced; the build history. */
import { api, sitePath } from '../api/hub-api.ts';
import type { Build, Instance, Site, SnapshotVersion } from '../api/hub-types.ts';
import { InstallHelp } from '../components/install-help.tsx';
import { usePolling } from '../hooks/use-polling.ts';

interface Fleet {
  readonly site: Site;
  readonly instances: readonly Instance[];
  readonly builds: readonly Build[];
  readonly versions: readonly SnapshotVersion[];
}

function ago(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return new Date(iso).toLocaleString();
}

export function FleetView({ siteId }: { siteId: string }) {
  const fleet = usePolling<Fleet>(
    async () => {
      const [site, instances, builds, versions] = await Promise.all([
        api<Site>('GET', sitePath(siteId)),
        api<Instance[]>('GET', sitePath(siteId, '/instances')),
        api<Build[]>('GET', sitePath(siteId, '/builds')),
        api<SnapshotVersion[]>('GET', sitePath(siteId, '/snapshots')),
      ]);
      return { site, instances, builds, versions };
    },
    5000,
    [siteId],
  );
  const data = fleet.data;
  if (!data) return <p class="loading">Loading…</p>;
  const current = data.site.currentVersion;
  return (
    <div>
      <h2>Instances</h2>
      <p>Current snapshot: {current === null ? 'none built yet' : <strong>v{current}</strong>}</p>
      {data.instances.length === 0 ? (
        <div class="empty">
          <p>No instance has synced yet.</p>
          <InstallHelp siteId={siteId} />
        </div>
      ) : (
        <table class="instances">
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">Snapshot</th>
              <th scope="col">Last sync</th>
              <th scope="col">Client</th>
            </tr>
          </thead>
          <tbody>
            {data.instances.map((i) => (
              <tr key={i.instanceId}>
                <td>{i.instanceId}</td>
                <td data-current={i.snapshotVersion === current}>
                  {i.snapshotVersion === null ? 'none' : `v${i.snapshotVersion}`}
                  {i.snapshotVersion !== null && i.snapshotVersion !== current ? ' (behind)' : ''}
                </td>
                <td>{ago(i.lastSeen)}</td>
                <td class="ua">{i.userAgent ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Builds</h2>
      {data.builds.length === 0 ? (
        <p class="empty">No builds yet: the first change to the rules starts one.</p>
      ) : (
        <table class="builds">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Rules revision</th>
              <th scope="col">Result</th>
              <th scope="col">Hub</th>
            </tr>
          </thead>
          <tbody>
            {data.builds.map((b) => (
              <tr key={b.id} data-status={b.status}>
                <td>{new Date(b.startedAt).toLocaleString()}</td>
                <td>{b.rulesRevision}</td>
                <td>
                  {b.status === 'succeeded' ? `v${b.version}` : b.status}
                  {b.error && <p class="field-error">{b.error}</p>}
                </td>
                <td>{b.hubInstance}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Retained snapshots</h2>
      <ul class="versions">
        {data.versions.map((v) => (
          <li key={v.version}>
            v{v.version}: revision {v.rulesRevision}, {(v.bytes / 1024).toFixed(0)} KiB,{' '}
            {new Date(v.createdAt).toLocaleString()} <code>{v.sha256.slice(0, 12)}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}
