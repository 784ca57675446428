import { useEffect, useRef, useState } from 'react';
import { api, envelope, unwrap } from '../api/client';
import { Link, navigate, useLocation } from '../router';
import { ConfirmButton, Empty, ErrorNote, FilterSelect, KINDS, Loading, Status, useAction, useLoad } from '../ui';

/** How long an archive can be undone from the notice. */
const UNDO_MS = 10_000;

export function TemplatesPage() {
  const { query } = useLocation();
  const scope = (query.get('scope') ?? 'mine') as 'mine' | 'library';
  const kind = query.get('kind') ?? '';
  const status = scope === 'mine' ? (query.get('status') ?? '') : '';
  const [search, setSearch] = useState(query.get('search') ?? '');
  const set = (k: string, v: string) => {
    const q = new URLSearchParams(query);
    if (v) q.set(k, v);
    else q.delete(k);
    navigate(`/templates?${q}`, true);
  };
  const list = useLoad(
    () =>
      envelope(
        api.GET('/organization/templates', {
          params: {
            query: {
              scope,
              limit: 100,
              ...(kind ? { kind: kind as 'image' | 'video' } : {}),
              ...(status ? { status: status as 'archived' } : {}),
              ...(query.get('search') ? { search: query.get('search')! } : {}),
            },
          },
        }),
      ),
    [scope, kind, status, query.get('search')],
  );
  const act = useAction();
  const duplicate = (id: string) =>
    void act.run(async () => {
      const copy = await unwrap(api.POST('/organization/templates/{id}/duplicate', { params: { path: { id } } }));
      navigate(`/templates/${copy.id}`);
    });
  // Undo (issue 29): archiving a published template can be taken back for UNDO_MS by publishing it
  // again (the API brings an archived template back the way a draft is published). A draft archived
  // has no way back to draft in the API, so it offers none.
  const [archived, setArchived] = useState<{ id: string; name: string; version: number; undo: boolean }>();
  const lapse = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(lapse.current), []);
  const transition = (id: string, to: 'publish' | 'archive', version: number, was?: { name: string; status: string }) =>
    void act.run(async () => {
      clearTimeout(lapse.current);
      setArchived(undefined);
      if (to === 'publish') await unwrap(api.POST('/organization/templates/{id}/publish', { params: { path: { id } }, body: { version } }));
      else {
        await unwrap(api.POST('/organization/templates/{id}/archive', { params: { path: { id } } }));
        if (was) {
          setArchived({ id, name: was.name, version, undo: was.status === 'published' });
          lapse.current = setTimeout(() => setArchived(undefined), UNDO_MS);
        }
      }
      list.reload();
    });

  return (
    <section>
      <h1>Templates</h1>
      {archived && (
        <p className="notice" role="status">
          Archived {archived.name}.{' '}
          {archived.undo && (
            <button type="button" disabled={act.busy} onClick={() => transition(archived.id, 'publish', archived.version)}>
              Undo
            </button>
          )}
        </p>
      )}
      <div className="tabs" role="group" aria-label="Which templates">
        <button type="button" aria-pressed={scope === 'mine'} onClick={() => set('scope', 'mine')}>
          Mine
        </button>
        <button type="button" aria-pressed={scope === 'library'} onClick={() => set('scope', 'library')}>
          Library
        </button>
      </div>
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          set('search', search.trim());
        }}
      >
        <label>
          Search
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <FilterSelect label="Kind" value={kind} options={KINDS} onChange={(v) => set('kind', v)} />
        {scope === 'mine' && (
          <label>
            Status
            <select value={status} onChange={(e) => set('status', e.target.value)}>
              <option value="">drafts and published</option>
              <option value="draft">draft</option>
              <option value="published">published</option>
              <option value="archived">archived</option>
            </select>
          </label>
        )}
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={list.error ?? act.error} />
      {list.loading && !list.data ? (
        <Loading what="Loading templates" />
      ) : list.data?.data.length === 0 ? (
        <Empty>{scope === 'mine' ? 'No templates of your own yet: duplicate one from the library.' : 'Nothing in the library matches.'}</Empty>
      ) : (
        <ul className="grid" aria-label="Templates">
          {list.data?.data.map((t) => (
            <li key={t.id} className="card" data-template={t.id}>
              <div className="thumb">{t.previewUrl ? <img src={t.previewUrl} alt="" loading="lazy" /> : <span className="muted">{t.kind}</span>}</div>
              <div className="meta">
                <strong>
                  <Link to={`/templates/${t.id}`}>{t.name}</Link>
                </strong>
                <span>
                  {t.kind} · {t.width}×{t.height}
                </span>
                {t.isOwn && <Status value={t.status} />}
              </div>
              <div className="actions">
                {!t.isOwn && (
                  <button type="button" disabled={act.busy} onClick={() => duplicate(t.id)} aria-label={`Duplicate ${t.name}`}>
                    Duplicate
                  </button>
                )}
                {t.isOwn && t.status !== 'published' && (
                  <button type="button" disabled={act.busy} onClick={() => transition(t.id, 'publish', t.version)} aria-label={`Publish ${t.name}`}>
                    Publish
                  </button>
                )}
                {t.isOwn && t.status !== 'archived' && (
                  <ConfirmButton label={`Archive ${t.name}`} question={`Archive ${t.name}? It can no longer be rendered.`} busy={act.busy} onConfirm={() => transition(t.id, 'archive', t.version, t)}>
                    Archive
                  </ConfirmButton>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
