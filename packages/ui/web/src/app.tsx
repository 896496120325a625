/**
 * The dashboard app: asks `/ui/session` first and shows the login page
 * without one (no data is fetched before); with one, the navigation, the
 * live state and the page of the current route.
 *
 * @module
 */
import { useCallback, useEffect, useState } from 'react';
import { currentSession, logout, onUnauthorized, type Session } from './api.js';
import { useLive } from './live.js';
import { href, useRoute } from './router.js';
import { LoginPage } from './pages/login-page.js';
import { NodesPage } from './pages/nodes-page.js';
import { OverviewPage } from './pages/overview-page.js';
import { SandboxPage } from './pages/sandbox-page.js';
import { SandboxesPage } from './pages/sandboxes-page.js';
import { TemplatesPage } from './pages/templates-page.js';

/** The root component. */
export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    currentSession().then(
      (s) => setSession(s ?? null),
      () => setSession(null),
    );
    return onUnauthorized(() => setSession(null));
  }, []);
  if (session === undefined) return <div className="splash">Loading…</div>;
  if (session === null) return <LoginPage onLogin={setSession} />;
  return <Shell session={session} onLogout={() => setSession(null)} />;
}

const NAV = [
  ['', 'Overview'],
  ['sandboxes', 'Sandboxes'],
  ['templates', 'Templates & snapshots'],
  ['nodes', 'Nodes'],
] as const;

function Shell({ session, onLogout }: { session: Session; onLogout: () => void }) {
  const route = useRoute();
  const live = useLive();
  const doLogout = useCallback(() => {
    void logout().finally(onLogout);
  }, [onLogout]);
  const section = route[0] ?? '';
  return (
    <div className="shell">
      <nav className="sidebar">
        <div className="brand">
          aenv <span className="kind">{session.kind}</span>
        </div>
        {NAV.map(([path, label]) => (
          <a
            key={path}
            href={path === '' ? '#/' : href(path)}
            className={section === path ? 'active' : ''}
            data-testid={`nav-${path === '' ? 'overview' : path}`}
          >
            {label}
          </a>
        ))}
        <div className="spacer" />
        <div className={live.connected ? 'live on' : 'live'} data-testid="live-status">
          {live.connected ? 'live' : 'reconnecting…'}
        </div>
        <button type="button" className="link" onClick={doLogout} data-testid="logout">
          Log out
        </button>
      </nav>
      <main className="content">
        {live.error !== undefined && (
          <div className="banner">Live updates failing: {live.error}</div>
        )}
        <Page route={route} live={live} session={session} />
      </main>
    </div>
  );
}

function Page({
  route,
  live,
  session,
}: {
  route: string[];
  live: ReturnType<typeof useLive>;
  session: Session;
}) {
  switch (route[0] ?? '') {
    case 'sandboxes':
      return route[1] === undefined ? (
        <SandboxesPage live={live} />
      ) : (
        <SandboxPage id={route[1]} live={live} />
      );
    case 'templates':
      return <TemplatesPage live={live} />;
    case 'nodes':
      return <NodesPage live={live} kind={session.kind} />;
    default:
      return <OverviewPage live={live} />;
  }
}
