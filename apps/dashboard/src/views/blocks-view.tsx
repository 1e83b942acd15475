/**
 * What the detectors published: the detector, what it blocks, its evidence (counts, window,
 * sample request ids) and expiry; revoke a block, or keep it as a permanent rule of the site.
 */
import { useState } from 'preact/hooks';
import { type ApiError, api, attempt, queryString, sitePath } from '../api/hub-api.ts';
import type { AutomaticBlock, BlockSubject } from '../api/hub-types.ts';
import { FieldError } from '../components/field-error.tsx';
import { usePolling } from '../hooks/use-polling.ts';

const STATUSES = ['active', 'expired', 'revoked', 'allowed', ''] as const;

export function describeSubject(subject: BlockSubject): string {
  switch (subject.kind) {
    case 'ip':
      return subject.addresses.length === 1
        ? `address ${subject.addresses[0]}`
        : `${subject.addresses.length} addresses: ${subject.addresses.slice(0, 5).join(', ')}${subject.addresses.length > 5 ? ', …' : ''}`;
    case 'asn':
      return `AS${subject.asn}`;
    case 'country':
      return `country ${subject.country}`;
    case 'header':
      return `${subject.name}: ${subject.value}`;
  }
}

export function BlocksView({ siteId }: { siteId: string }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('active');
  const [error, setError] = useState<ApiError>();
  const [message, setMessage] = useState<string>();
  const blocks = usePolling(
    () =>
      api<AutomaticBlock[]>('GET', sitePath(siteId, `/automatic-blocks${queryString({ status })}`)),
    5000,
    [siteId, status],
  );

  async function act(block: AutomaticBlock, what: 'revoke' | 'keep') {
    const path = sitePath(siteId, `/automatic-blocks/${encodeURIComponent(block.id)}`);
    await attempt(async () => {
      if (what === 'revoke') {
        await api('DELETE', path);
        setMessage(
          `Revoked: ${describeSubject(block.subject)} is no longer blocked from the next snapshot on.`,
        );
      } else {
        const rule = await api<{ id: string }>('POST', `${path}/keep`);
        setMessage(`Kept as rule ${rule.id}, which does not expire.`);
      }
      blocks.reload();
    }, setError);
  }

  return (
    <div>
      <div class="toolbar">
        <label for="block-status">Show</label>
        <select
          id="block-status"
          value={status}
          onChange={(e) => setStatus(e.currentTarget.value as typeof status)}
        >
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s === '' ? 'all' : s}
            </option>
          ))}
        </select>
      </div>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <FieldError error={error} />
      {blocks.data === undefined ? (
        <p class="loading">Loading…</p>
      ) : blocks.data.length === 0 ? (
        <p class="empty">
          No {status || ''} automatic blocks. Detectors publish one when an address, network or user
          agent crosses a threshold of the site's detector settings (see Detectors).
        </p>
      ) : (
        <table class="blocks">
          <thead>
            <tr>
              <th scope="col">Detector</th>
              <th scope="col">Blocks</th>
              <th scope="col">Evidence</th>
              <th scope="col">Status</th>
              <th scope="col">Until</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {blocks.data.map((b) => (
              <tr key={b.id} data-block={b.id}>
                <td>{b.detector}</td>
                <td>
                  {describeSubject(b.subject)}
                  <p class="note">
                    {b.action === 'rate_limit' ? 'rate limit' : 'block'}, {b.mode}
                  </p>
                </td>
                <td>
                  {b.evidence.count.toLocaleString()} in {b.evidence.windowSeconds} s (threshold{' '}
                  {b.evidence.threshold})
                  {b.evidence.sampleRequestIds.length > 0 && (
                    <details>
                      <summary>sample requests</summary>
                      <ul class="ids">
                        {b.evidence.sampleRequestIds.map((id) => (
                          <li key={id}>
                            <code>{id}</code>
                          </li>
                        ))}
                      </ul>
                    </details>
                  )}
                  {b.allowedBy.length > 0 && (
                    <p class="note">covered by allow rule {b.allowedBy.join(', ')}</p>
                  )}
                </td>
                <td>{b.status}</td>
                <td>{new Date(b.expiresAt).toLocaleString()}</td>
                <td class="row-actions">
                  {b.status === 'active' && (
                    <>
                      <button type="button" class="quiet" onClick={() => act(b, 'keep')}>
                        Keep as rule
                      </button>
                      <button type="button" class="quiet danger" onClick={() => act(b, 'revoke')}>
                        Revoke
                      </button>
                    </>
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
