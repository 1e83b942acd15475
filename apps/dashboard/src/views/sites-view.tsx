/** Every site, and a form for a new one (whose first key is shown once, with install steps). */
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, attempt } from '../api/hub-api.ts';
import type { CreatedSite, Site } from '../api/hub-types.ts';
import { FieldError } from '../components/field-error.tsx';
import { InstallHelp } from '../components/install-help.tsx';

export function SitesView() {
  const [sites, setSites] = useState<readonly Site[]>();
  const [created, setCreated] = useState<CreatedSite>();
  const [name, setName] = useState('');
  const [id, setId] = useState('');
  const [error, setError] = useState<ApiError>();

  const load = () => api<Site[]>('GET', '/v1/sites').then(setSites);
  useEffect(() => void load(), []);

  async function create(event: Event) {
    event.preventDefault();
    await attempt(async () => {
      const site = await api<CreatedSite>('POST', '/v1/sites', { name, ...(id ? { id } : {}) });
      setCreated(site);
      setName('');
      setId('');
      await load();
    }, setError);
  }

  return (
    <section>
      <h1>Sites</h1>
      {created && (
        <div class="notice" role="status">
          <h2>Site {created.site.id} created</h2>
          <p>
            Its key, shown once (the hub keeps only a hash):{' '}
            <code class="secret">{created.credentials.key}</code>
          </p>
          <InstallHelp siteId={created.site.id} siteKey={created.credentials.key} />
        </div>
      )}
      {sites === undefined ? (
        <p class="loading">Loading…</p>
      ) : sites.length === 0 ? (
        <p class="empty">No sites yet: create one below, then install the client in your app.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Site</th>
              <th scope="col">Name</th>
              <th scope="col">Snapshot</th>
              <th scope="col">Rules revision</th>
            </tr>
          </thead>
          <tbody>
            {sites.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={`/ui/sites/${encodeURIComponent(s.id)}/traffic`}>{s.id}</a>
                </td>
                <td>{s.name}</td>
                <td>{s.currentVersion === null ? 'none yet' : `v${s.currentVersion}`}</td>
                <td>
                  {s.rulesRevision}
                  {s.builtRevision < s.rulesRevision ? ' (building)' : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="inline" onSubmit={create}>
        <h2>New site</h2>
        <label for="site-name">Name</label>
        <input
          id="site-name"
          required
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <FieldError error={error} field="name" />
        <label for="site-id">Id (optional)</label>
        <input
          id="site-id"
          value={id}
          placeholder="shop"
          onInput={(e) => setId(e.currentTarget.value)}
        />
        <FieldError error={error} field="id" />
        <button type="submit">Create site</button>
        <FieldError error={error} fields={['name', 'id']} />
      </form>
    </section>
  );
}
