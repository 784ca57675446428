import { api, API_BASE, unwrap } from '../api/client';
import { failureInWords } from '../failure';
import { SETTLED, useLiveRenders } from '../live';
import { Link } from '../router';
import { age, bytes, CopyButton, ErrorNote, Loading, ModeBadge, Status, useAction, useLoad } from '../ui';

/** A POSIX shell single-quoted word (a `'` closes, is escaped, and reopens). */
const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

export function RenderPage({ id }: { id: string }) {
  const loaded = useLoad(() => unwrap(api.GET('/v1/render/{id}', { params: { path: { id } } })), [id]);
  const [render] = useLiveRenders(loaded.data ? [loaded.data] : [], loaded.reload, (renderId) => renderId === id);
  // The render's request and its events (with their webhook deliveries): the events reread at each status change.
  const request = useLoad(() => unwrap(api.GET('/v1/render/{id}/edit', { params: { path: { id } } })), [id]);
  const events = useLoad(() => unwrap(api.GET('/v1/render/{id}/events', { params: { path: { id } } })), [id, render?.status]);
  const cancel = useAction();
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!render) return <Loading what="Loading the render" />;
  // The same render again: POST /v1/render with the edit it was made from (the key stays in the environment).
  const curl = request.data
    ? `curl -X POST -H "x-api-key: $API_KEY" -H "content-type: application/json" --data-raw ${shellQuote(JSON.stringify(request.data))} ${location.origin}${API_BASE}/v1/render`
    : null;

  return (
    <section>
      <p>
        <Link to="/">← Renders</Link>
      </p>
      <h1>
        Render <code>{render.id}</code> <Status value={render.status} /> <ModeBadge mode={render.mode} />
      </h1>
      {!SETTLED.has(render.status) && (
        <p>
          <progress max={1} value={render.progress} aria-label="Progress">
            {Math.round(render.progress * 100)}%
          </progress>{' '}
          {Math.round(render.progress * 100)}%
        </p>
      )}
      <div className="output">
        {render.status === 'done' && render.url ? (
          render.kind === 'video' ? (
            <video src={render.url} poster={render.posterUrl ?? undefined} controls playsInline aria-label="Rendered video" />
          ) : render.format === 'pdf' ? (
            <p>
              <a href={render.url}>Open the PDF</a>
            </p>
          ) : (
            <img src={render.url} alt={`Output of render ${render.id}`} />
          )
        ) : render.status === 'failed' ? (
          <div className="error" role="alert">
            {failureInWords(render.error, request.data?.edit).map((line) => (
              <p key={line} className="plain">
                <strong>{line}</strong>
              </p>
            ))}
            <p className="muted">
              <code>{render.error?.code ?? 'RENDER_FAILED'}</code> {render.error?.message}
              {render.error?.stage && <> (while {render.error.stage})</>}
            </p>
          </div>
        ) : null}
      </div>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{render.kind}</dd>
        <dt>Format</dt>
        <dd>
          {render.format} {render.width}×{render.height}
        </dd>
        <dt>Credits</dt>
        <dd>{render.credits}</dd>
        <dt>Mode</dt>
        <dd>{render.mode}</dd>
        <dt>Template</dt>
        <dd>{render.templateId ? <Link to={`/templates/${render.templateId}`}>{render.templateId}</Link> : 'edit'}</dd>
        <dt>Size</dt>
        <dd>{bytes(render.fileSizeBytes)}</dd>
        {render.url && (
          <>
            <dt>URL</dt>
            <dd className="wrap">
              <a href={render.url}>{render.url}</a>
            </dd>
          </>
        )}
      </dl>
      <h2>Events</h2>
      {events.error ? (
        <ErrorNote error={events.error} />
      ) : !events.data ? (
        <Loading what="Loading the events" />
      ) : (
        <ol className="timeline" aria-label="Events">
          {events.data.map((e) => (
            <li key={e.id} data-event={e.type}>
              <strong>{e.type}</strong> <time dateTime={e.created}>{new Date(e.created).toLocaleString()}</time> <span className="muted">({age(e.created)})</span>
              {e.deliveries.length > 0 && (
                <ul className="deliveries" aria-label={`Webhook deliveries of ${e.type}`}>
                  {e.deliveries.map((d) => (
                    <li key={d.id} data-delivery={d.id}>
                      <code>{d.endpointId}</code> <Status value={d.state} /> {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
                      {d.lastStatus !== null && <> · HTTP {d.lastStatus}</>}
                      {d.redelivery && <> · redelivery</>}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
      <div className="actions">
        {!SETTLED.has(render.status) && (
          <button type="button" disabled={cancel.busy} onClick={() => void cancel.run(async () => (await unwrap(api.POST('/v1/render/{id}/cancel', { params: { path: { id } } })), loaded.reload()))}>
            Cancel render
          </button>
        )}
        {curl && <CopyButton text={curl} label="Copy as curl" />}
      </div>
      <ErrorNote error={cancel.error} />
      <h2>Request</h2>
      {request.error ? (
        <ErrorNote error={request.error} />
      ) : !request.data ? (
        <Loading what="Loading the request" />
      ) : (
        <pre className="json" tabIndex={0} aria-label="The request JSON">{JSON.stringify(request.data, null, 2)}</pre>
      )}
      <h2>Record</h2>
      <pre className="json" tabIndex={0} aria-label="The render record">{JSON.stringify(render, null, 2)}</pre>
    </section>
  );
}
