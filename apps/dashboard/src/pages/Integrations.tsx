// Connected accounts (issue 29 "Connect accounts from the browser"): every provider with its state; an
// owner connects the workspace suite through the provider's consent page (authorization code + PKCE,
// back at /integrations/callback), turns on an offline engine in one click where this machine has it,
// and disconnects after confirming. Credentials are never shown.
import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { useMe } from '../auth';
import { Link, navigate, useLocation } from '../router';
import { ConfirmButton, ErrorNote, Loading, Status, useAction, useLoad } from '../ui';

type ProviderState = components['schemas']['ProviderStateDto'];

/** What each provider is, in words. */
const ABOUT: Record<string, { name: string; what: string }> = {
  'workspace-suite': { name: 'Workspace suite', what: 'Spreadsheets, file storage and contacts (Google)' },
  'voice-provider': { name: 'Voice', what: 'Voice-over from text' },
  'messaging-provider': { name: 'Messaging', what: 'WhatsApp, SMS and email' },
  'speech-alpha': { name: 'Speech (alpha)', what: 'Captions from speech' },
  'speech-beta': { name: 'Speech (beta)', what: 'Captions from speech' },
  'speech-gamma': { name: 'Speech (gamma)', what: 'Captions from speech' },
};

/** Providers connected with an API key, checked against the provider before it is saved. */
const KEYED = new Set(['voice-provider', 'speech-alpha', 'speech-beta', 'speech-gamma']);

/** An API key (and, where the provider has another endpoint, its base URL): checked by the provider, then saved; never shown again. */
function KeyForm({ provider, name, connected, onDone }: { provider: string; name: string; connected: boolean; onDone: () => void }) {
  const [apiKey, setApiKey] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const save = useAction();
  return (
    <details>
      <summary>{connected ? 'Replace the API key' : 'Connect with an API key'}</summary>
      <form
        className="fields"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run(async () => {
            await unwrap(api.POST('/organization/integrations/{provider}/key', { params: { path: { provider } }, body: { apiKey, ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}) } }));
            setApiKey('');
            onDone();
          });
        }}
      >
        <label>
          API key of {name}
          <input type="password" autoComplete="off" required minLength={8} value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
        </label>
        <label>
          Base URL (optional)
          <input type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="the provider's public API" />
        </label>
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Checking with the provider…' : 'Check and connect'}
        </button>
        <ErrorNote error={save.error} />
      </form>
    </details>
  );
}

/** The provider's answer on the way back from its consent page, in words. */
const CONSENT_ERRORS: Record<string, string> = {
  access_denied: 'You cancelled on the provider\'s consent page: nothing was connected.',
  invalid_scope: 'The provider refused the access this service asks for: nothing was connected.',
};

/** Where the consent page sends the user back: the code is traded for the grant with this session. */
export function IntegrationsCallback() {
  const { query } = useLocation();
  const finish = useAction();
  const started = useRef(false);
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const error = query.get('error');
    const code = query.get('code');
    const state = query.get('state');
    if (error || !code || !state) {
      setProblem(error ? (CONSENT_ERRORS[error] ?? `The provider answered "${error}": nothing was connected.`) : 'The provider sent no code back: nothing was connected.');
      return;
    }
    void finish.run(async () => {
      const connection = await unwrap(api.POST('/organization/integrations/workspace-suite/connect', { body: { code, state } }));
      navigate(`/integrations?connected=${encodeURIComponent(connection.provider)}`, true);
    });
    // once, on arrival
  }, []);
  return (
    <section>
      <h1>Connecting</h1>
      {problem ? <p className="error" role="alert">{problem}</p> : !finish.error && <Loading what="Finishing the connection" />}
      <ErrorNote error={finish.error} />
      <p>
        <Link to="/integrations">Back to integrations</Link>
      </p>
    </section>
  );
}

export function IntegrationsPage() {
  const { workspace } = useMe();
  const owner = workspace.role === 'owner';
  const { query } = useLocation();
  const list = useLoad(() => unwrap(api.GET('/organization/integrations')), [workspace.id]);
  const act = useAction();
  const [suiteBase, setSuiteBase] = useState('');
  const connected = query.get('connected');
  const [tested, setTested] = useState<{ provider: string; message: string }>();
  const test = (provider: string) =>
    void act.run(async () => {
      setTested(undefined);
      setTested(await unwrap(api.POST('/organization/integrations/{provider}/test', { params: { path: { provider } } })));
    });

  const connectSuite = () =>
    void act.run(async () => {
      const consent = await unwrap(api.POST('/organization/integrations/workspace-suite/authorize', { body: suiteBase.trim() ? { baseUrl: suiteBase.trim() } : {} }));
      location.assign(consent.authorizationUrl);
    });
  const local = (provider: string) => void act.run(async () => (await unwrap(api.POST('/organization/integrations/{provider}/local', { params: { path: { provider } } })), list.reload()));
  const disconnect = (provider: string) => void act.run(async () => (await unwrap(api.DELETE('/organization/integrations/{provider}', { params: { path: { provider } } })), list.reload()));

  return (
    <section>
      <h1>Integrations</h1>
      <p className="muted">Connected accounts: spreadsheets and storage, voice, speech and messaging. {owner ? '' : 'An owner of the workspace connects and disconnects them.'}</p>
      {connected && (
        <p className="notice" role="status">
          Connected {ABOUT[connected]?.name ?? connected}.
        </p>
      )}
      <ErrorNote error={list.error ?? act.error} />
      {!list.data ? (
        !list.error && <Loading what="Loading connections" />
      ) : (
        <ul className="list" aria-label="Providers">
          {list.data.map((p: ProviderState) => {
            const about = ABOUT[p.provider] ?? { name: p.provider, what: '' };
            const c = p.connection;
            return (
              <li key={p.provider} data-provider={p.provider}>
                <strong>{about.name}</strong> <span className="muted">{about.what}</span>{' '}
                {c ? <Status value={c.status} /> : <span className="muted">not connected</span>}
                {c && (
                  <p className="muted">
                    {c.engine === 'local' ? 'The offline engine of this deployment' : (c.account.email ?? c.account.name ?? 'Connected')} · since {new Date(c.connectedAt).toLocaleDateString()}
                    {c.reauthReason && <> · the provider refused the grant: {c.reauthReason}</>}
                  </p>
                )}
                {owner && (
                  <div className="actions">
                    {p.provider === 'workspace-suite' && (
                      <>
                        <button type="button" className={c ? undefined : 'primary'} disabled={act.busy} onClick={connectSuite}>
                          {c ? 'Connect again' : 'Connect'}
                        </button>
                        <details>
                          <summary>Another authorization server</summary>
                          <label>
                            Base URL
                            <input type="url" value={suiteBase} onChange={(e) => setSuiteBase(e.target.value)} placeholder="https://…" />
                          </label>
                        </details>
                      </>
                    )}
                    {KEYED.has(p.provider) && <KeyForm provider={p.provider} name={about.name} connected={!!c} onDone={list.reload} />}
                    {c && (
                      <button type="button" disabled={act.busy} onClick={() => test(p.provider)} aria-label={`Test ${about.name}`}>
                        Test
                      </button>
                    )}
                    {tested?.provider === p.provider && (
                      <span className="notice" role="status">
                        {tested.message}
                      </span>
                    )}
                    {p.localEngine === 'available' && c?.engine !== 'local' && (
                      <button type="button" disabled={act.busy} onClick={() => local(p.provider)} aria-label={`Use the offline engine for ${about.name}`}>
                        Use the offline engine
                      </button>
                    )}
                    {p.localEngine === 'missing' && <span className="muted">Offline engine: install {p.missingPrograms.join(', ')} on the server</span>}
                    {c && (
                      <ConfirmButton
                        label={`Disconnect ${about.name}`}
                        question={`Disconnect ${about.name}? Its credentials are deleted; renders, captions and messages that use it fail until it is connected again.`}
                        busy={act.busy}
                        onConfirm={() => disconnect(p.provider)}
                      >
                        Disconnect
                      </ConfirmButton>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
