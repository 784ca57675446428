import { useEffect, useState } from 'react';
import { api, envelope } from '../api/client';
import { Link, navigate, useLocation } from '../router';
import { age, credits, Empty, ErrorNote, FilterSelect, KINDS, Loading, ModeBadge, Status, useLoad } from '../ui';
import { SETTLED, useLiveRenders } from '../live';

const STATUSES = ['queued', 'rendering', 'saving', 'done', 'failed', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];

export function RendersPage() {
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const kind = query.get('kind') ?? '';
  const templateId = query.get('templateId') ?? '';
  const page = Number(query.get('page') ?? 1);
  const sort = query.get('sort') ?? 'createdAt';
  const order = query.get('order') ?? 'desc';
  const from = query.get('createdFrom') ?? '';
  const to = query.get('createdTo') ?? '';
  const setAll = (changes: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v) q.set(k, v);
      else q.delete(k);
    }
    if (!('page' in changes)) q.delete('page');
    navigate(`/?${q}`, true);
  };
  const set = (k: string, v: string) => setAll({ [k]: v });
  const list = useLoad(
    () =>
      envelope(
        api.GET('/v1/render', {
          params: {
            query: {
              limit: 100,
              page,
              ...(status ? { status: status as Status } : {}),
              ...(kind ? { kind: kind as 'image' | 'video' } : {}),
              ...(templateId ? { templateId } : {}),
              ...(from ? { createdFrom: from } : {}),
              ...(to ? { createdTo: to } : {}),
              sort: sort as 'createdAt',
              order: order as 'desc',
            },
          },
        }),
      ),
    [status, kind, templateId, page, sort, order, from, to],
  );
  const renders = useLiveRenders(list.data?.data ?? [], list.reload);
  // The names of the workspace's templates (own and library copies), for the cards.
  const templates = useLoad(async () => {
    const rows = (await envelope(api.GET('/organization/templates', { params: { query: { scope: 'mine', limit: 100 } } }))).data;
    return new Map(rows.map((t) => [t.id, t.name]));
  }, []);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 10_000);
    return () => clearInterval(t);
  }, []);
  const pages = list.data?.pagination.totalPages ?? 1;

  return (
    <section>
      <h1>Renders</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect label="Status" value={status} options={STATUSES} onChange={(v) => set('status', v)} />
        <FilterSelect label="Kind" value={kind} options={KINDS} onChange={(v) => set('kind', v)} />
        <label>
          Template id
          <input value={templateId} onChange={(e) => set('templateId', e.target.value.trim())} placeholder="tpl_…" />
        </label>
        <label>
          Created from
          <input type="date" value={from} onChange={(e) => set('createdFrom', e.target.value)} />
        </label>
        <label>
          to
          <input type="date" value={to} onChange={(e) => set('createdTo', e.target.value)} />
        </label>
        <label>
          Sort
          <select value={`${sort} ${order}`} onChange={(e) => setAll({ sort: e.target.value.split(' ')[0]!, order: e.target.value.split(' ')[1]! })}>
            <option value="createdAt desc">newest</option>
            <option value="createdAt asc">oldest</option>
            <option value="completedAt desc">recently finished</option>
            <option value="credits desc">most credits</option>
            <option value="fileSizeBytes desc">largest</option>
          </select>
        </label>
      </form>
      <ErrorNote error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="Loading renders" />
      ) : renders.length === 0 && !list.error ? (
        <Empty>
          No renders yet. Open a <Link to="/templates">template</Link> and press Render, or call <code>POST /api/v1/render</code>.
        </Empty>
      ) : (
        <ul className="grid renders" aria-label="Renders">
          {renders.map((r) => (
            <li key={r.id} className="card" data-render={r.id} data-status={r.status}>
              <Link to={`/renders/${r.id}`} aria-label={`Render ${r.id}, ${r.kind} ${r.format}, ${r.status}${r.mode === 'test' ? ', test mode' : ''}`}>
                <div className="thumb">
                  {r.thumbnailUrl || r.posterUrl || (r.kind === 'image' && r.url && r.format !== 'pdf') ? (
                    <img src={r.thumbnailUrl ?? r.posterUrl ?? r.url ?? ''} alt="" loading="lazy" />
                  ) : (
                    <span className="muted">{r.format}</span>
                  )}
                </div>
              </Link>
              <div className="meta">
                <Status value={r.status} />
                <ModeBadge mode={r.mode} />
                {!SETTLED.has(r.status) && (
                  <progress max={1} value={r.progress} aria-label={`Progress of ${r.id}`}>
                    {Math.round(r.progress * 100)}%
                  </progress>
                )}
                {r.templateId && templates.data?.has(r.templateId) && <strong className="wrap">{templates.data.get(r.templateId)}</strong>}
                <span>
                  {r.kind} · {r.format}
                </span>
                <span>{credits(r.credits)}</span>
                <time dateTime={r.createdAt}>{age(r.createdAt, now)}</time>
              </div>
            </li>
          ))}
        </ul>
      )}
      {pages > 1 && (
        <nav className="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => set('page', String(page - 1))}>
            Previous
          </button>
          <span>
            Page {page} of {pages}
          </span>
          <button type="button" disabled={page >= pages} onClick={() => set('page', String(page + 1))}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
