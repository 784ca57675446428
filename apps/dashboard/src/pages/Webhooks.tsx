import { useState, type FormEvent } from 'react';
import { api, envelope, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { age, Empty, ErrorNote, Loading, Status, useAction, useLoad } from '../ui';

type Endpoint = components['schemas']['WebhookEndpointDto'];
type EventName = components['schemas']['CreateWebhookDto']['events'] extends (infer E)[] | undefined ? E : never;
const EVENTS: EventName[] = ['render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled', 'template.published', 'asset.ready', 'asset.failed', 'credits.low', 'credits.exhausted'];

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
            <Status value={d.state} /> <strong>{d.event}</strong> {d.test && <span className="badge">test</span>} <span>HTTP {d.lastStatus ?? '—'}</span>{' '}
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
      <h2 className="wrap">{e.url}</h2>
      <p>
        {e.isActive && !e.disabled ? <span className="badge s-done">active</span> : <span className="badge s-failed">{e.disabled ? 'disabled after failures' : 'paused'}</span>} {e.description}
      </p>
      <p className="muted">
        {e.method} · {e.bodyFormat} · {e.events.join(', ')} · secret {e.secretHint}
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
        <button type="button" disabled={act.busy} onClick={() => void act.run(async () => (await envelope(api.DELETE('/organization/webhooks/{id}', { params: { path: { id } } })), onChange()))}>
          Delete
        </button>
      </div>
      {tested && <p role="status">{tested}</p>}
      <ErrorNote error={act.error} />
      <details open>
        <summary>Delivery log</summary>
        <Deliveries endpoint={id} version={version} />
      </details>
    </li>
  );
}

export function WebhooksPage() {
  const list = useLoad(() => unwrap(api.GET('/organization/webhooks', { params: { query: { limit: 100 } } })), []);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventName[]>(['render.completed', 'render.failed', 'render.cancelled']);
  const [secret, setSecret] = useState<string>();
  const create = useAction();
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    void create.run(async () => {
      const made = await unwrap(api.POST('/organization/webhooks', { body: { url, events, ...(description ? { description } : {}) } }));
      setSecret(made.secret);
      setUrl('');
      list.reload();
    });
  };
  return (
    <section>
      <h1>Webhooks</h1>
      {secret && (
        <p className="notice" role="status">
          Signing secret, shown once: <code className="wrap">{secret}</code>
        </p>
      )}
      <details>
        <summary>Add an endpoint</summary>
        <form className="stack" onSubmit={submit}>
          <label>
            URL
            <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/renders" />
          </label>
          <label>
            Description
            <input value={description} maxLength={200} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <fieldset>
            <legend>Events</legend>
            <div className="checks">
              {EVENTS.map((n) => (
                <label key={n}>
                  <input type="checkbox" checked={events.includes(n)} onChange={(e) => setEvents(e.target.checked ? [...events, n] : events.filter((x) => x !== n))} /> {n}
                </label>
              ))}
            </div>
          </fieldset>
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
