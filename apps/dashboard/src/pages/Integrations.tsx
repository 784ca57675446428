// Connected accounts (issue 29 "Connect accounts from the browser"): every provider with its state; an
// owner connects the workspace suite through the provider's consent page (authorization code + PKCE,
// back at /integrations/callback), turns on an offline engine in one click where this machine has it,
// and disconnects after confirming. Credentials are never shown.
import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { useMe } from '../auth';
import { Link, navigate, useLocation } from '../router';
import { ApiFailure } from '../api/client';
import { ConfirmButton, described, ErrorNote, FieldErrors, Loading, Status, useAction, useLoad, type Problems } from '../ui';

type ProviderState = components['schemas']['ProviderStateDto'];
type ChannelBody = components['schemas']['ConnectChannelDto'];
type Channel = 'primary_chat' | 'sms' | 'email';

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

/** Each messaging channel: its name, and the fields of its form (the CLI's integration:connect --channel flags). */
const CHANNELS: Record<Channel, { name: string; fields: { key: keyof ChannelBody; label: string; secret?: boolean; optional?: boolean; kind?: 'url' | 'number' | 'checkbox'; hint?: string }[] }> = {
  primary_chat: {
    name: 'WhatsApp',
    fields: [
      { key: 'accessToken', label: 'Access token', secret: true },
      { key: 'phoneNumberId', label: 'Phone number ID' },
      { key: 'wabaId', label: 'WhatsApp Business Account ID' },
      { key: 'displayNumber', label: 'Display number', optional: true, hint: 'read from WhatsApp when left empty' },
      { key: 'appSecret', label: 'App secret', secret: true, optional: true, hint: 'checks the signature of delivery statuses' },
      { key: 'verifyToken', label: 'Verify token', optional: true },
      { key: 'baseUrl', label: 'Base URL', kind: 'url', optional: true, hint: 'the Graph API when left empty' },
    ],
  },
  sms: {
    name: 'SMS',
    fields: [
      { key: 'accountSid', label: 'Account SID' },
      { key: 'authToken', label: 'Auth token', secret: true },
      { key: 'from', label: 'From number', optional: true, hint: 'E.164, such as +15017122661; or a messaging service' },
      { key: 'messagingServiceSid', label: 'Messaging service SID', optional: true },
      { key: 'baseUrl', label: 'Base URL', kind: 'url', optional: true, hint: 'Twilio when left empty' },
    ],
  },
  email: {
    name: 'Email',
    fields: [
      { key: 'smtpHost', label: 'SMTP host' },
      { key: 'smtpPort', label: 'Port', kind: 'number', optional: true, hint: '587' },
      { key: 'smtpSecure', label: 'TLS from the start (port 465)', kind: 'checkbox', optional: true },
      { key: 'smtpUser', label: 'User', optional: true },
      { key: 'smtpPassword', label: 'Password', secret: true, optional: true },
      { key: 'from', label: 'Sender', hint: 'Name <address@example.com>' },
    ],
  },
};

/**
 * One messaging channel's form: checked against the provider before it is saved (a refusal shows
 * beside the field it is about, in the provider's words); secrets are never shown again.
 */
function ChannelForm({ onDone }: { onDone: () => void }) {
  const [channel, setChannel] = useState<Channel>('primary_chat');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const save = useAction();
  const problems: Problems = { error: save.error, id: (path) => `channel-${channel}-${path}-error` };
  const body = (): ChannelBody => {
    const out: Record<string, unknown> = {};
    for (const f of CHANNELS[channel].fields) {
      const v = values[f.key];
      if (f.kind === 'checkbox') out[f.key] = v === true;
      else if (typeof v === 'string' && v.trim()) out[f.key] = f.kind === 'number' ? Number(v) : v.trim();
    }
    return out as ChannelBody;
  };
  const pick = (next: Channel) => {
    if (next === channel) return;
    setChannel(next);
    setValues({});
    save.setError(undefined);
  };
  const failure = save.error instanceof ApiFailure && save.error.errors ? save.error : undefined;
  return (
    <details>
      <summary>Connect a channel</summary>
      <form
        className="fields wide"
        aria-label="Connect a messaging channel"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run(async () => {
            await unwrap(api.POST('/organization/integrations/messaging-provider/channels/{channel}', { params: { path: { channel } }, body: body() }));
            setValues({});
            onDone();
          });
        }}
      >
        <label>
          Channel
          <select value={channel} onChange={(e) => pick(e.target.value as Channel)}>
            {(Object.keys(CHANNELS) as Channel[]).map((c) => (
              <option key={c} value={c}>
                {CHANNELS[c].name}
              </option>
            ))}
          </select>
        </label>
        {CHANNELS[channel].fields.map((f) =>
          f.kind === 'checkbox' ? (
            <div key={f.key} className="checks">
              <label>
                <input type="checkbox" checked={values[f.key] === true} onChange={(e) => setValues({ ...values, [f.key]: e.target.checked })} {...described(problems, f.key)} /> {f.label}
              </label>
              <FieldErrors problems={problems} path={f.key} />
            </div>
          ) : (
            <label key={f.key}>
              <span>
                {f.label}
                {f.optional && <span className="muted"> (optional)</span>}
              </span>
              <input
                type={f.secret ? 'password' : f.kind === 'url' ? 'url' : f.kind === 'number' ? 'number' : 'text'}
                autoComplete="off"
                required={!f.optional}
                value={String(values[f.key] ?? '')}
                onChange={(e) => setValues({ ...values, [f.key]: e.target.value })}
                placeholder={f.hint}
                {...(f.kind === 'number' ? { min: 1, max: 65535 } : {})}
                {...described(problems, f.key)}
              />
              <FieldErrors problems={problems} path={f.key} />
            </label>
          ),
        )}
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Checking with the provider…' : 'Check and connect'}
        </button>
        {failure ? (
          <p className="error" role="alert">
            Nothing was connected: {Object.keys(failure.errors ?? {}).length === 1 ? 'the field marked says why' : 'the fields marked say why'}.
          </p>
        ) : (
          <ErrorNote error={save.error} />
        )}
      </form>
    </details>
  );
}

/** The connected channels: who sends on each, its Test, and Disconnect after confirming (the others stay). */
function ConnectedChannels({ channels, onChange }: { channels: ProviderState['channels']; onChange: () => void }) {
  const act = useAction();
  const [tested, setTested] = useState<{ channel: string; message: string }>();
  if (!channels.length) return null;
  return (
    <>
      <ul className="list" aria-label="Messaging channels">
        {channels.map((c) => {
          const name = CHANNELS[c.channel as Channel]?.name ?? c.channel;
          const channel = c.channel as Channel;
          return (
            <li key={c.channel} data-channel={c.channel}>
              <strong>{name}</strong> <span className="muted">{c.identifier}</span>
              <div className="actions">
                <button
                  type="button"
                  aria-label={`Test ${name}`}
                  disabled={act.busy}
                  onClick={() =>
                    void act.run(async () => {
                      setTested(undefined);
                      const r = await unwrap(api.POST('/organization/integrations/messaging-provider/channels/{channel}/test', { params: { path: { channel } } }));
                      setTested({ channel: c.channel, message: r.message });
                    })
                  }
                >
                  Test
                </button>
                {tested?.channel === c.channel && (
                  <span className="notice" role="status">
                    {tested.message}
                  </span>
                )}
                <ConfirmButton
                  label={`Disconnect ${name}`}
                  question={`Disconnect ${name}? Its account is deleted here; messages and campaigns on ${name} fail until it is connected again. The other channels stay.`}
                  busy={act.busy}
                  onConfirm={() => void act.run(async () => (await unwrap(api.DELETE('/organization/integrations/messaging-provider/channels/{channel}', { params: { path: { channel } } })), onChange()))}
                >
                  Disconnect
                </ConfirmButton>
              </div>
            </li>
          );
        })}
      </ul>
      <ErrorNote error={act.error} />
    </>
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
                {p.provider === 'messaging-provider' && (owner ? <ConnectedChannels channels={p.channels} onChange={list.reload} /> : p.channels.length > 0 && <p className="muted">{p.channels.map((x) => `${CHANNELS[x.channel as Channel]?.name ?? x.channel} ${x.identifier ?? ''}`.trim()).join(' · ')}</p>)}
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
                    {p.provider === 'messaging-provider' && <ChannelForm onDone={list.reload} />}
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
                    {p.localEngine === 'missing' && <span className="muted">Offline engine: install {p.missingPrograms.join(', ')} where the workers run</span>}
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
