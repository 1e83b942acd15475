/**
 * The dashboard's shell: the session (log in, found again on reload, lost on a 401), then the
 * site picker and the views of one site. Routes live under `/ui/`, which the hub answers with
 * this app for every path.
 */
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router } from 'preact-iso';
import { api, setCsrfToken, whenSessionLost } from '../api/hub-api.ts';
import type { Session } from '../api/hub-types.ts';
import { LoginView } from '../views/login-view.tsx';
import { NotFoundView } from '../views/not-found-view.tsx';
import { SiteView } from '../views/site-view.tsx';
import { SitesView } from '../views/sites-view.tsx';

type SessionState = { kind: 'checking' } | { kind: 'out' } | { kind: 'in'; session: Session };

export function App() {
  const [state, setState] = useState<SessionState>({ kind: 'checking' });

  useEffect(() => {
    whenSessionLost(() => {
      setCsrfToken(undefined);
      setState({ kind: 'out' });
    });
    api<Session>('GET', '/v1/session')
      .then((session) => signedIn(session))
      .catch(() => setState({ kind: 'out' }));
  }, []);

  function signedIn(session: Session) {
    setCsrfToken(session.csrfToken);
    setState({ kind: 'in', session });
  }

  async function logout() {
    await api('DELETE', '/v1/session').catch(() => undefined);
    setCsrfToken(undefined);
    setState({ kind: 'out' });
  }

  if (state.kind === 'checking') return <p class="loading">Loading…</p>;
  if (state.kind === 'out') return <LoginView onLogin={signedIn} />;
  return (
    <LocationProvider>
      <header class="masthead">
        <a class="brand" href="/ui/">
          Rampart
        </a>
        <span class="session">
          session until {new Date(state.session.expiresAt).toLocaleString()}
        </span>
        <button type="button" class="quiet" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        <Router>
          <Route path="/ui/" component={SitesView} />
          <Route path="/ui" component={SitesView} />
          <Route path="/ui/sites/:site/:tab?" component={SiteView} />
          <Route default component={NotFoundView} />
        </Router>
      </main>
    </LocationProvider>
  );
}
