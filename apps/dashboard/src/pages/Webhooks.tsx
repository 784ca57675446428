import { useState, type FormEvent } from 'react';
import { api, envelope, session, unwrap, type Mode } from '../api/client';
import type { components } from '../api/schema';
import { age, CheckboxGroup, ConfirmButton, CopyButton, described, Empty, ErrorNote, FieldErrors, Loading, ModeBadge, Status, useAction, useLoad, type Problems } from '../ui';

type Endpoint = components['schemas']['WebhookEndpointDto'];
type EventName = components['schemas']['CreateWebhookDto']['events'] extends (infer E)[] | undefined ? E : never;
const EVENTS: EventName[] = ['render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled', 'template.published', 'asset.ready', 'asset.failed', 'credits.low', 'credits.exhausted'];
type Update = components['schemas']['UpdateWebhookDto'];
const METHODS: Endpoint['method'][] = ['POST', 'PUT', 'PATCH', 'GET'];
const FORMATS: Endpoint['bodyFormat'][] = ['json', 'form', 'multipart', 'none'];

interface EndpointValues {
  url: string;
  description: string;
  events: EventName[];
  /** The modes of the events it receives (issue 28): live, test or both. */
  modes: Mode[];
}

/** The event modes an endpoint may be given: in test mode only test (the API refuses live there). */
const modeOptions = (): Mode[] => (session.mode === 'test' ? ['test'] : ['live', 'test']);

/** The fields the create and the edit forms share: URL, description, the events sent and their modes. */
function EndpointFields({ values, onChange, problems, urlPlaceholder }: { values: EndpointValues; onChange: (values: EndpointValues) => void; problems?: Problems; urlPlaceholder?: string }) {
  const { url, description, events, modes } = values;
  return (
    <>
      <label>
        URL
        <input type="url" required value={url} onChange={(x) => onChange({ ...values, url: x.target.value })} placeholder={urlPlaceholder} {...described(problems, 'url')} />
        <FieldErrors problems={problems} path="url" />
      </label>
      <label>
        Description
        <input value={description} maxLength={200} onChange={(x) => onChange({ ...values, description: x.target.value })} {...described(problems, 'description')} />
        <FieldErrors problems={problems} path="description" />
      </label>
      <CheckboxGroup legend="Events" options={EVENTS} selected={events} onChange={(next) => onChange({ ...values, events: next })}>
        <FieldErrors problems={problems} path="events" />
      </CheckboxGroup>
      <CheckboxGroup legend="Modes of the events sent" options={modeOptions()} selected={modes} onChange={(next) => onChange({ ...values, modes: next })}>
        <FieldErrors problems={problems} path="modes" />
      </CheckboxGroup>
    </>
  );
}

const headerLines = (h: Endpoint['headers']) => h.map((x) => `${x.key}: ${x.value}`).join('\n');
const parseHeaders = (text: string): NonNullable<Update['headers']> =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const i = l.indexOf(':');
      return i < 0 ? { key: l.trim(), value: '' } : { key: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
    });

/** An endpoint's settings as the API's PATCH takes them; the 422's `errors` shown beside each field. */
function EditEndpoint({ e, onSaved }: { e: Endpoint; onSaved: () => void }) {
  const [fields, setFields] = useState<EndpointValues>({ url: e.url, description: e.description ?? '', events: e.events as EventName[], modes: e.modes });
  const [method, setMethod] = useState(e.method);
  const [bodyFormat, setBodyFormat] = useState(e.bodyFormat);
  const [headers, setHeaders] = useState(headerLines(e.headers));
  const [payloadMode, setPayloadMode] = useState(e.payloadMode);
  const [payloadTemplate, setPayloadTemplate] = useState(e.payloadTemplate ?? '');
  const save = useAction();
  const problems: Problems = { error: save.error, id: (path) => `edit-${e.id}-${path}-error` };
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const body: Update = { ...fields, description: fields.description || null, method, bodyFormat, headers: parseHeaders(headers), payloadMode, payloadTemplate: payloadTemplate || null };
    void save.run(async () => (await unwrap(api.PATCH('/organization/webhooks/{id}', { params: { path: { id: e.id } }, body })), onSaved()));
  };
  return (
    <details>
      <summary>Edit settings</summary>
      <form className="stack" onSubmit={submit} aria-label={`Settings of ${e.url}`}>
        <EndpointFields values={fields} onChange={setFields} problems={problems} />
        <label>
          Method
          <select value={method} onChange={(x) => setMethod(x.target.value as Endpoint['method'])}>
            {METHODS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
          <FieldErrors problems={problems} path="method" />
        </label>
        <label>
          Body format
          <select value={bodyFormat} onChange={(x) => setBodyFormat(x.target.value as Endpoint['bodyFormat'])} {...described(problems, 'bodyFormat')}>
            {FORMATS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
          <FieldErrors problems={problems} path="bodyFormat" />
        </label>
        <label>
          Headers (one <code>Name: value</code> a line; saved values are shown masked: leave a masked value as it is to keep it)
          <textarea rows={3} value={headers} onChange={(x) => setHeaders(x.target.value)} {...described(problems, 'headers')} />
          <FieldErrors problems={problems} path="headers" />
        </label>
        <label>
          Payload
          <select value={payloadMode} onChange={(x) => setPayloadMode(x.target.value as Endpoint['payloadMode'])}>
            <option value="default">default (the event envelope)</option>
            <option value="custom">custom (a template)</option>
          </select>
        </label>
        {payloadMode === 'custom' && (
          <label>
            Payload template (JSON with <code>{'{{variables}}'}</code>)
            <textarea rows={4} value={payloadTemplate} onChange={(x) => setPayloadTemplate(x.target.value)} {...described(problems, 'payloadTemplate')} />
            <FieldErrors problems={problems} path="payloadTemplate" />
          </label>
        )}
        <button type="submit" className="primary" disabled={save.busy}>
          Save settings
        </button>
        <ErrorNote error={save.error} />
      </form>
    </details>
  );
}

function Deliveries({ endpoint, version }: { endpoint: string; version: number }) {
  const log = useLoad(() => unwrap(api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: endpoint }, query: { limit: 20 } } })), [endpoint, version]);
  const redeliver = useAction();
  if (log.error) return <ErrorNote error={log.error} />;
  if (!log.data) return <Loading what="Loading deliveries" />;
  if (log.data.length === 0) return <Empty>No deliveries yet: send a test event.</Empty>;
  return (
    <>
      <ErrorNote error={redeliver.error} />
      <ul className="list deliveries" aria-label="Deliveries">
        {log.data.map((d) => (
          <li key={d.id} data-delivery={d.id}>
            <Status value={d.state} /> <strong>{d.event}</strong> {d.test ? <span className="badge">test delivery</span> : <ModeBadge mode={d.mode} />} <span>HTTP {d.lastStatus ?? '—'}</span>{' '}
            <span className="muted">
              {d.attempts} attempt{d.attempts === 1 ? '' : 's'} · {age(d.createdAt)}
            </span>{' '}
            {!d.test && (
              <button type="button" disabled={redeliver.busy} onClick={() => void redeliver.run(async () => (await unwrap(api.POST('/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: endpoint, deliveryId: d.id } } })), log.reload()))}>
                Redeliver
              </button>
            )}
            {d.log.length > 0 && (
              <ol className="attempts">
                {d.log.map((a) => (
                  <li key={a.attempt}>
                    attempt {a.attempt}: {a.status ? `HTTP ${a.status}` : a.error} in {a.durationMs} ms
                  </li>
                ))}
              </ol>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function EndpointCard({ e, onChange }: { e: Endpoint; onChange: () => void }) {
  const [version, setVersion] = useState(0);
  const [tested, setTested] = useState<string>();
  const act = useAction();
  const id = e.id;
  const refresh = () => setTimeout(() => setVersion((v) => v + 1), 1500);
  return (
    <li className="card endpoint" data-endpoint={id}>
      <h2 className="wrap">
        {e.url} <ModeBadge mode={e.mode} />
      </h2>
      <p>
        {e.isActive && !e.disabled ? <span className="badge s-done">active</span> : <span className="badge s-failed">{e.disabled ? 'disabled after failures' : 'paused'}</span>} {e.description}
      </p>
      <p className="muted">
        {e.method} · {e.bodyFormat} · {e.events.join(', ')} · {e.modes.join(' and ')} events · secret {e.secretHint}
      </p>
      <div className="actions">
        <button
          type="button"
          disabled={act.busy}
          onClick={() =>
            void act.run(async () => {
              const r = await unwrap(api.POST('/organization/webhooks/{id}/test', { params: { path: { id } } }));
              setTested(r.ok ? `Test delivered: HTTP ${r.status}` : `Test not accepted: HTTP ${r.status}`);
              refresh();
            })
          }
        >
          Send test event
        </button>
        {(!e.isActive || e.disabled) && (
          <button type="button" disabled={act.busy} onClick={() => void act.run(async () => (await unwrap(api.PATCH('/organization/webhooks/{id}', { params: { path: { id } }, body: { isActive: true } })), onChange()))}>
            Re-enable
          </button>
        )}
        <ConfirmButton
          label={`Delete ${e.url}`}
          question={`Delete the endpoint ${e.url} and its delivery log? Its events stop at once.`}
          busy={act.busy}
          onConfirm={() => void act.run(async () => (await envelope(api.DELETE('/organization/webhooks/{id}', { params: { path: { id } } })), onChange()))}
        >
          Delete
        </ConfirmButton>
      </div>
      {tested && <p role="status">{tested}</p>}
      <ErrorNote error={act.error} />
      <EditEndpoint key={e.updatedAt} e={e} onSaved={onChange} />
      <details open>
        <summary>Delivery log</summary>
        <Deliveries endpoint={id} version={version} />
      </details>
    </li>
  );
}

export function WebhooksPage() {
  const list = useLoad(() => unwrap(api.GET('/organization/webhooks', { params: { query: { limit: 100 } } })), []);
  const [fields, setFields] = useState<EndpointValues>({ url: '', description: '', events: ['render.completed', 'render.failed', 'render.cancelled'], modes: modeOptions() });
  const [secret, setSecret] = useState<string>();
  const create = useAction();
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    void create.run(async () => {
      const { url, description, events, modes } = fields;
      // The switch may have moved to test mode since the form was filled: live is not offered there.
      const allowed = modes.filter((m) => modeOptions().includes(m));
      const made = await unwrap(api.POST('/organization/webhooks', { body: { url, events, modes: allowed, ...(description ? { description } : {}) } }));
      setSecret(made.secret);
      setFields((f) => ({ ...f, url: '' }));
      list.reload();
    });
  };
  return (
    <section>
      <h1>Webhooks</h1>
      {secret && (
        <p className="notice" role="status">
          Signing secret, shown once: <code className="wrap">{secret}</code> <CopyButton text={secret} label="Copy secret" />
        </p>
      )}
      <details>
        <summary>Add an endpoint</summary>
        <form className="stack" onSubmit={submit}>
          <EndpointFields values={fields} onChange={setFields} urlPlaceholder="https://example.com/hooks/renders" />
          <button type="submit" className="primary" disabled={create.busy}>
            Add endpoint
          </button>
          <ErrorNote error={create.error} />
        </form>
      </details>
      <ErrorNote error={list.error} />
      {!list.data ? (
        !list.error && <Loading what="Loading endpoints" />
      ) : list.data.length === 0 ? (
        <Empty>No endpoints yet.</Empty>
      ) : (
        <ul className="endpoints">
          {list.data.map((e) => (
            <EndpointCard key={e.id} e={e} onChange={list.reload} />
          ))}
        </ul>
      )}
    </section>
  );
}
