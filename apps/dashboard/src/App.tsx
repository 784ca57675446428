import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { api, envelope, refreshSession, session, type Mode } from './api/client';
import { loadMe, MeContext, preferredWorkspace, rememberWorkspace, SignIn, WorkspaceSwitcher, type Me } from './auth';
import { Link, navigate, useLocation } from './router';
import { CreditsPage } from './pages/Credits';
import { DesignPage } from './pages/Design';
import { IntegrationsCallback, IntegrationsPage } from './pages/Integrations';
import { KeysPage } from './pages/Keys';
import { MediaPage } from './pages/Media';
import { RenderPage } from './pages/Render';
import { RendersPage } from './pages/Renders';
import { TemplatePage } from './pages/Template';
import { TeamPage } from './pages/Team';
import { TemplatesPage } from './pages/Templates';
import { WebhooksPage } from './pages/Webhooks';

const NAV: [string, string][] = [
  ['/', 'Renders'],
  ['/templates', 'Templates'],
  ['/media', 'Media'],
  ['/keys', 'API keys'],
  ['/webhooks', 'Webhooks'],
  ['/credits', 'Credits'],
  ['/integrations', 'Integrations'],
  ['/team', 'Team'],
];

function Page({ path }: { path: string }) {
  const [, section, id, sub] = path.split('/');
  switch (section) {
    case '':
    case 'renders':
      return id ? <RenderPage id={id} /> : <RendersPage />;
    case 'templates':
      return id ? sub === 'design' ? <DesignPage id={id} /> : <TemplatePage id={id} /> : <TemplatesPage />;
    case 'media':
      return <MediaPage />;
    case 'keys':
      return <KeysPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'credits':
      return <CreditsPage />;
    case 'integrations':
      return id === 'callback' ? <IntegrationsCallback /> : <IntegrationsPage />;
    case 'team':
      return <TeamPage />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No page at <code>{path}</code>. <Link to="/">Back to renders</Link>
          </p>
        </section>
      );
  }
}

/** The test/live switch of every page: the X-Service-Mode of the dashboard's calls, kept in this browser. */
function ModeSwitch({ mode }: { mode: Mode }) {
  return (
    <button type="button" role="switch" className="mode-switch" aria-checked={mode === 'test'} onClick={() => session.setMode(mode === 'test' ? 'live' : 'test')}>
      Test mode
    </button>
  );
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [starting, setStarting] = useState(true);
  const token = useSyncExternalStore(session.subscribe, () => session.token);
  const workspaceId = useSyncExternalStore(session.subscribe, () => session.workspaceId);
  const mode = useSyncExternalStore(session.subscribe, () => session.mode);
  const { path, visit } = useLocation();
  // Each page names the tab after its heading; after a navigation (not the first page) focus moves to
  // that heading, so a screen reader announces the new page.
  const landed = useRef(false);
  useEffect(() => {
    const heading = document.querySelector<HTMLElement>('main h1');
    if (!heading) return;
    document.title = `${heading.textContent?.trim() || 'Dashboard'} · Media Render`;
    if (!landed.current) {
      landed.current = true;
      return;
    }
    heading.tabIndex = -1;
    heading.focus();
  }, [visit, me]);
  const signedIn = (found: Me) => {
    const ws = preferredWorkspace(found.workspaces);
    if (ws) rememberWorkspace(ws.id);
    setMe(found);
  };

  // A page load tries the refresh cookie first: a session survives a reload without a token in storage.
  useEffect(() => {
    void (async () => {
      try {
        if (await refreshSession()) signedIn(await loadMe());
      } catch {
        session.clear();
      } finally {
        setStarting(false);
      }
    })();
  }, []);
  useEffect(() => {
    if (!token) setMe(null);
  }, [token]);

  if (starting) return <p className="muted">Loading…</p>;
  if (!token || !me) return <SignIn onSignedIn={signedIn} />;
  const workspace = me.workspaces.find((w) => w.id === workspaceId) ?? me.workspaces[0];
  if (!workspace) {
    return (
      <main id="main" className="signin">
        <h1>No workspace</h1>
        <p>This account belongs to no workspace yet: ask a workspace owner to add your number.</p>
      </main>
    );
  }
  const signOut = async () => {
    await envelope(api.POST('/auth/sign-out')).catch(() => undefined);
    session.clear();
    navigate('/', true);
  };
  const current = '/' + (path.split('/')[1] ?? '');

  return (
    <MeContext.Provider value={{ me, workspace, switchTo: (id) => (rememberWorkspace(id), navigate('/')), signOut }}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <nav aria-label="Main">
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} aria-current={(to === '/' ? current === '/' || current === '/renders' : current === to) ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <div className="who">
          <ModeSwitch mode={mode} />
          <WorkspaceSwitcher />
          <button type="button" onClick={() => void signOut()}>
            Sign out everywhere
          </button>
        </div>
      </header>
      {mode === 'test' && (
        <p className="test-banner">
          <strong>Test mode.</strong> Renders are free and watermarked, and nothing reaches a real customer or provider. Live records can be viewed, not changed.
        </p>
      )}
      {/* A page is loaded afresh in the other workspace or mode (its calls and its event stream carry both). */}
      <main id="main" key={`${workspace.id} ${mode}`}>
        <Page key={visit} path={path} />
      </main>
    </MeContext.Provider>
  );
}
