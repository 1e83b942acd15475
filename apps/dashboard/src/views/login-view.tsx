/** Log in with the hub's admin token; the hub answers with a session cookie and a CSRF token. */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api/hub-api.ts';
import type { Session } from '../api/hub-types.ts';

/**
 * Outside loopback the hub marks the session cookie `Secure`, which a browser keeps only over
 * HTTPS: say so before a login that would seem to work and then fall back here.
 */
function needsHttps(): boolean {
  const { protocol, hostname } = window.location;
  const loopback = hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname);
  return protocol === 'http:' && !loopback;
}

export function LoginView({ onLogin }: { onLogin: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onLogin(await api<Session>('POST', '/v1/session', { token }));
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 401 ? 'That is not the admin token.' : String(e),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="login">
      <h1>Rampart</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <label for="token">Admin token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-invalid={error !== undefined}
        />
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
      {needsHttps() && (
        <p class="field-error" role="alert">
          This page is served over plain HTTP on a non-loopback address: the browser will not keep
          the session's Secure cookie. Serve the hub over HTTPS (behind a TLS proxy, with
          HUB_TRUST_PROXY=true), or open it on 127.0.0.1.
        </p>
      )}
      <p id="login-help" class="help">
        The hub's <code>HUB_ADMIN_TOKEN</code>. With <code>npm run dev</code> it is in{' '}
        <code>apps/hub/.data/admin-token</code>.
      </p>
    </main>
  );
}
