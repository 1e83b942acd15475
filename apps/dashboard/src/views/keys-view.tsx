/** A site's client keys: rotate (the new key shown once), revoke. Keys themselves are never shown again. */
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, attempt, sitePath } from '../api/hub-api.ts';
import type { IssuedKey, SiteKey } from '../api/hub-types.ts';
import { FieldError } from '../components/field-error.tsx';
import { InstallHelp } from '../components/install-help.tsx';

export function KeysView({ siteId }: { siteId: string }) {
  const [keys, setKeys] = useState<readonly SiteKey[]>();
  const [issued, setIssued] = useState<IssuedKey>();
  const [revokeExisting, setRevokeExisting] = useState(false);
  const [error, setError] = useState<ApiError>();

  const load = () => api<SiteKey[]>('GET', sitePath(siteId, '/keys')).then(setKeys);
  useEffect(() => void load(), [siteId]);

  const run = (what: () => Promise<void>) =>
    attempt(async () => {
      await what();
      await load();
    }, setError);

  const rotate = () =>
    run(async () =>
      setIssued(await api<IssuedKey>('POST', sitePath(siteId, '/keys/rotate'), { revokeExisting })),
    );
  const revoke = (key: SiteKey) => {
    if (!window.confirm(`Revoke key ${key.keyId}? Instances using it stop syncing and reporting.`))
      return;
    void run(() => api('DELETE', sitePath(siteId, `/keys/${encodeURIComponent(key.keyId)}`)));
  };

  return (
    <div>
      {issued && (
        <div class="notice" role="status">
          <p>
            New key, shown once (the hub keeps only its hash):{' '}
            <code class="secret">{issued.key}</code>
          </p>
          <InstallHelp siteId={siteId} siteKey={issued.key} />
        </div>
      )}
      <FieldError error={error} />
      <div class="toolbar">
        <button type="button" onClick={rotate}>
          Rotate key
        </button>
        <label>
          <input
            type="checkbox"
            checked={revokeExisting}
            onChange={(e) => setRevokeExisting(e.currentTarget.checked)}
          />{' '}
          and revoke every existing key now (else revoke them once instances use the new one)
        </label>
      </div>
      {keys === undefined ? (
        <p class="loading">Loading…</p>
      ) : (
        <table class="keys">
          <thead>
            <tr>
              <th scope="col">Key id</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.keyId} data-key={k.keyId}>
                <td>
                  <code>{k.keyId}</code>
                </td>
                <td>{new Date(k.createdAt).toLocaleString()}</td>
                <td>
                  {k.revokedAt ? `revoked ${new Date(k.revokedAt).toLocaleString()}` : 'active'}
                </td>
                <td>
                  {!k.revokedAt && (
                    <button type="button" class="quiet danger" onClick={() => revoke(k)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
