import { api, API_BASE, unwrap } from '../api/client';
import { SETTLED, useLiveRenders } from '../live';
import { Link } from '../router';
import { age, bytes, CopyButton, ErrorNote, Loading, Status, useAction, useLoad } from '../ui';

export function RenderPage({ id }: { id: string }) {
  const loaded = useLoad(() => unwrap(api.GET('/v1/render/{id}', { params: { path: { id } } })), [id]);
  const [render] = useLiveRenders(loaded.data ? [loaded.data] : [], loaded.reload, (renderId) => renderId === id);
  const cancel = useAction();
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!render) return <Loading what="Loading the render" />;
  const curl = `curl -H "x-api-key: $API_KEY" ${location.origin}${API_BASE}/v1/render/${render.id}`;
  const events: [string, string | null][] = [
    ['created', render.createdAt],
    ['started', render.startedAt],
    [render.status, SETTLED.has(render.status) ? render.completedAt : null],
  ];

  return (
    <section>
      <p>
        <Link to="/">← Renders</Link>
      </p>
      <h1>
        Render <code>{render.id}</code> <Status value={render.status} />
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
          <ErrorNote error={{ message: render.error?.message ?? 'The render failed', code: render.error?.code ?? 'RENDER_FAILED' }} />
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
      <ol className="timeline">
        {events
          .filter(([, at]) => at)
          .map(([name, at]) => (
            <li key={name}>
              <strong>{name}</strong> <time dateTime={at!}>{new Date(at!).toLocaleString()}</time> <span className="muted">({age(at)})</span>
            </li>
          ))}
      </ol>
      <div className="actions">
        {!SETTLED.has(render.status) && (
          <button type="button" disabled={cancel.busy} onClick={() => void cancel.run(async () => (await unwrap(api.POST('/v1/render/{id}/cancel', { params: { path: { id } } })), loaded.reload()))}>
            Cancel render
          </button>
        )}
        <CopyButton text={curl} label="Copy as curl" />
      </div>
      <ErrorNote error={cancel.error} />
      <h2>Record</h2>
      <pre className="json" tabIndex={0} aria-label="The render record">{JSON.stringify(render, null, 2)}</pre>
    </section>
  );
}
