import { useEffect, useRef, useState, type DragEvent } from 'react';
import { api, envelope, API_BASE, ApiFailure, refreshSession, sessionHeaders } from '../api/client';
import type { components } from '../api/schema';
import { usePollWhile } from '../live';
import { bytes, ConfirmButton, Empty, ErrorNote, FilterSelect, Loading, ModeBadge, Status, useAction, useLoad } from '../ui';

type Asset = components['schemas']['AssetDto'];
const TYPES = ['image', 'video', 'audio', 'font', 'lottie', 'svg'] as const;
const STATUSES = ['ready', 'processing', 'uploading', 'failed'] as const;

interface Upload {
  name: string;
  loaded: number;
  total: number;
  error?: ApiFailure;
  done?: boolean;
}

/** POST /v1/assets through XMLHttpRequest (fetch reports no upload progress); an expired session is refreshed once. */
async function upload(file: File, onProgress: (loaded: number) => void): Promise<{ id: string }> {
  try {
    return await uploadOnce(file, onProgress);
  } catch (err) {
    const code = (err as ApiFailure).code;
    if ((code === 'TOKEN_EXPIRED' || code === 'INVALID_TOKEN') && (await refreshSession())) return uploadOnce(file, onProgress);
    throw err;
  }
}

function uploadOnce(file: File, onProgress: (loaded: number) => void): Promise<{ id: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API_BASE}/v1/assets`);
    for (const [k, v] of Object.entries(sessionHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      let body: { data?: { id: string }; code?: string; message?: string } = {};
      try {
        body = JSON.parse(xhr.responseText || '{}') as typeof body;
      } catch {
        // not JSON (a proxy's page): the status says it
      }
      if (xhr.status < 300 && body.data) resolve(body.data);
      else reject(new ApiFailure(body.code ?? `HTTP_${xhr.status}`, body.message ?? xhr.statusText, xhr.status));
    };
    xhr.onerror = () => reject(new ApiFailure('NETWORK_ERROR', 'The upload was interrupted', 0));
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

/** What a file looks or sounds like (issue 29): a picture's or video's thumbnail, a sound's waveform and player, a font's specimen, a Lottie's first frame. */
function Thumb({ a }: { a: Asset }) {
  if (a.status === 'ready' && a.type === 'audio') {
    return (
      <div className="thumb sound">
        {a.waveformUrl && <img src={a.waveformUrl} alt="" loading="lazy" />}
        <audio src={a.url} controls preload="none" aria-label={`Play ${a.name}`} />
      </div>
    );
  }
  if (a.status === 'ready' && a.type === 'font') return <Specimen a={a} />;
  if (a.status === 'ready' && a.type === 'lottie' && a.sizeBytes <= LOTTIE_PREVIEW_BYTES) return <LottieFrame a={a} />;
  const src = a.thumbnailUrl ?? (a.type === 'image' || a.type === 'svg' ? a.url : null);
  return <div className="thumb">{src && a.status === 'ready' ? <img src={src} alt="" loading="lazy" /> : <span className="muted">{a.type}</span>}</div>;
}

/** Lottie files drawn in the list up to this size (the upload limit is 20 MB); larger ones show their type. */
const LOTTIE_PREVIEW_BYTES = 2 * 1024 * 1024;

/** What stands in for an image a Lottie names by URL: one transparent pixel. */
const BLANK = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

/**
 * A Lottie with nothing that would reach out of the page or into it: every file asset becomes embedded
 * (`e: 1`, no `u`), its `p` kept only when it is a `data:image/` URI, else a blank pixel; fonts lose
 * their URLs, the animation its lazily fetched `segments`; and layer and shape names given as element
 * ids or classes (`ln`, `cl`) are dropped, so an upload cannot clash with the page's own ids.
 */
function inert(data: Record<string, unknown>): object {
  for (const asset of (data.assets ?? []) as Record<string, unknown>[]) {
    if (!('p' in asset)) continue;
    asset.p = typeof asset.p === 'string' && asset.p.startsWith('data:image/') ? asset.p : BLANK;
    asset.u = '';
    asset.e = 1;
  }
  for (const font of ((data.fonts as { list?: Record<string, unknown>[] } | undefined)?.list ?? [])) delete font.fPath;
  delete data.segments;
  const strip = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(strip);
    if (typeof value !== 'object' || value === null) return;
    const o = value as Record<string, unknown>;
    for (const key of ['ln', 'cl']) if (typeof o[key] === 'string') delete o[key];
    Object.values(o).forEach(strip);
  };
  strip(data.layers);
  for (const asset of (data.assets ?? []) as Record<string, unknown>[]) strip(asset.layers);
  return data;
}

/**
 * A Lottie's first frame, drawn by lottie-web's light SVG player: no expressions, so no script in the
 * file ever runs; the player's chunk is loaded only when a Lottie is shown.
 */
function LottieFrame({ a }: { a: Asset }) {
  const box = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'pending' | 'drawn' | 'failed'>('pending');
  useEffect(() => {
    const abort = new AbortController();
    let destroy = () => undefined as void;
    (async () => {
      const [{ default: lottie }, res] = await Promise.all([import('lottie-web/build/player/lottie_light'), fetch(a.url, { signal: abort.signal })]);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const animationData = inert((await res.json()) as Record<string, unknown>);
      if (abort.signal.aborted || !box.current) return;
      const anim = lottie.loadAnimation({ container: box.current, renderer: 'svg', loop: false, autoplay: false, animationData, rendererSettings: { preserveAspectRatio: 'xMidYMid meet' } });
      destroy = () => anim.destroy();
      anim.addEventListener('DOMLoaded', () => {
        anim.goToAndStop(0, true);
        setState('drawn');
      });
    })().catch(() => !abort.signal.aborted && setState('failed'));
    return () => {
      abort.abort();
      destroy();
    };
  }, [a.url]);
  return (
    <div className="thumb lottie" data-lottie={state}>
      <div ref={box} role="img" aria-label={`First frame of ${a.name}`} />
      {state === 'failed' && <span className="muted">lottie</span>}
    </div>
  );
}

/**
 * A font's specimen, set in the uploaded file itself (a FontFace of its own name, so it never stands
 * in for a family of the page); until it loads, or if it cannot (a storage without CORS), its family
 * name in the page's font.
 */
function Specimen({ a }: { a: Asset }) {
  const face = `specimen-${a.id}`;
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    let live = true;
    const font = new FontFace(face, `url(${JSON.stringify(a.url)})`);
    font.load().then(
      (f) => {
        if (!live) return;
        document.fonts.add(f);
        setLoaded(true);
      },
      () => undefined,
    );
    return () => {
      live = false;
      document.fonts.delete(font);
    };
  }, [face, a.url]);
  return (
    <div className="thumb specimen" data-specimen={loaded ? 'loaded' : 'pending'} style={loaded ? { fontFamily: `"${face}"` } : undefined}>
      <span className="big">Aa</span>
      <span>{a.fontFamily ?? a.name}</span>
      <span>The quick brown fox 0123</span>
    </div>
  );
}

function useAssets(scope: 'workspace' | 'global', type: string, search: string, status = '', folder = '', tags = '') {
  return useLoad(
    () =>
      envelope(
        api.GET('/v1/assets', {
          params: {
            query: {
              scope,
              limit: 100,
              ...(type ? { type } : {}),
              ...(search ? { search } : {}),
              ...(status ? { status: status as 'ready' } : {}),
              ...(folder ? { folder } : {}),
              ...(tags ? { tags } : {}),
            },
          },
        }),
      ),
    [scope, type, search, status, folder, tags],
  );
}

export function MediaPage() {
  const [scope, setScope] = useState<'workspace' | 'global'>('workspace');
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const [folder, setFolder] = useState('');
  const [tags, setTags] = useState('');
  const list = useAssets(scope, type, search, status, folder.trim(), tags.replace(/\s+/g, ''));
  // Uploads are processed by a worker (thumbnails, probing): shown live until they are ready or failed.
  usePollWhile(list.data?.data.some((a) => a.status === 'processing' || a.status === 'uploading') ?? false, list.reload);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const del = useAction();

  const send = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      const i = uploads.length;
      const patch = (p: Partial<Upload>) => setUploads((u) => u.map((x, j) => (j === i ? { ...x, ...p } : x)));
      setUploads((u) => [...u, { name: file.name, loaded: 0, total: file.size }]);
      upload(file, (loaded) => patch({ loaded })).then(
        () => (patch({ done: true, loaded: file.size }), list.reload()),
        (error: ApiFailure) => patch({ error }),
      );
    }
  };
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    send(e.dataTransfer.files);
  };

  return (
    <section>
      <h1>Media</h1>
      <div className="tabs" role="group" aria-label="Library">
        <button type="button" aria-pressed={scope === 'workspace'} onClick={() => setScope('workspace')}>
          Your media
        </button>
        <button type="button" aria-pressed={scope === 'global'} onClick={() => setScope('global')}>
          Stock library
        </button>
      </div>
      {scope === 'workspace' && (
        <div className={`drop${over ? ' over' : ''}`} onDragOver={(e) => (e.preventDefault(), setOver(true))} onDragLeave={() => setOver(false)} onDrop={drop}>
          <p>Drop files here, or</p>
          <button type="button" onClick={() => input.current?.click()}>
            Choose files
          </button>
          <input ref={input} type="file" multiple hidden aria-label="Files to upload" onChange={(e) => send(e.target.files)} />
          {uploads.length > 0 && (
            <ul className="uploads" aria-label="Uploads">
              {uploads.map((u, i) => (
                <li key={i}>
                  <span>{u.name}</span>{' '}
                  <progress max={u.total || 1} value={u.loaded} aria-label={`Upload of ${u.name}`} /> {u.done ? 'uploaded' : u.error ? '' : `${Math.round((u.loaded / (u.total || 1)) * 100)}%`}
                  <ErrorNote error={u.error} />
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <FilterSelect label="Type" value={type} options={TYPES} onChange={setType} />
        <label>
          Folder
          <input value={folder} onChange={(e) => setFolder(e.target.value)} />
        </label>
        <label>
          Tags
          <input value={tags} onChange={(e) => setTags(e.target.value)} placeholder="logo,brand" />
        </label>
        <FilterSelect label="Status" value={status} options={STATUSES} onChange={setStatus} />
      </form>
      <ErrorNote error={list.error ?? del.error} />
      {list.loading && !list.data ? (
        <Loading what="Loading media" />
      ) : list.data?.data.length === 0 ? (
        <Empty>{scope === 'workspace' ? 'No media yet: drop an image, a video or a sound above.' : 'Nothing in the stock library matches.'}</Empty>
      ) : (
        <ul className="grid" aria-label="Media">
          {list.data?.data.map((a) => (
            <li key={a.id} className="card" data-asset={a.id}>
              <Thumb a={a} />
              <div className="meta">
                <strong className="wrap">{a.name}</strong>
                <span>
                  {a.type} · {bytes(a.sizeBytes)}
                </span>
                <span>
                  <Status value={a.status} /> <ModeBadge mode={a.mode} />
                </span>
                <code className="wrap">{a.id}</code>
              </div>
              {a.scope === 'workspace' && (
                <div className="actions">
                  <ConfirmButton
                    label={`Delete ${a.name}`}
                    question={`Delete ${a.name}? Templates and renders that use its URL can no longer load it.`}
                    busy={del.busy}
                    onConfirm={() => void del.run(async () => (await envelope(api.DELETE('/v1/assets/{id}', { params: { path: { id: a.id } } })), list.reload()))}
                  >
                    Delete
                  </ConfirmButton>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Picks a ready asset of a type from the media library or the stock library (a template's media field). */
export function AssetPicker({ type, label, onPick }: { type: 'image' | 'video' | 'audio'; label: string; onPick: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  const [scope, setScope] = useState<'workspace' | 'global'>('workspace');
  const [uploading, setUploading] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <div className="picker">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        Choose from media
      </button>{' '}
      <label className="button">
        Upload
        <input
          type="file"
          className="sr-only"
          aria-label={`Upload a file for ${label}`}
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (!f) return;
            setUploading(true);
            upload(f, () => undefined).then(
              (a) => (setUploading(false), onPick(a.id)),
              (err: unknown) => (setUploading(false), setError(err)),
            );
          }}
        />
      </label>
      {uploading && <span role="status"> Uploading…</span>}
      <ErrorNote error={error} />
      {open && (
        <div className="pick" role="dialog" aria-label={`Media for ${label}`}>
          <div className="tabs" role="group">
            <button type="button" aria-pressed={scope === 'workspace'} onClick={() => setScope('workspace')}>
              Your media
            </button>
            <button type="button" aria-pressed={scope === 'global'} onClick={() => setScope('global')}>
              Stock
            </button>
          </div>
          <PickList scope={scope} type={type} onPick={(id) => (setOpen(false), onPick(id))} />
        </div>
      )}
    </div>
  );
}

function PickList({ scope, type, onPick }: { scope: 'workspace' | 'global'; type: string; onPick: (id: string) => void }) {
  const list = useAssets(scope, type, '', 'ready');
  if (list.error) return <ErrorNote error={list.error} />;
  if (!list.data) return <Loading />;
  if (list.data.data.length === 0) return <Empty>No ready {type} here.</Empty>;
  return (
    <ul className="grid small">
      {list.data.data.map((a) => (
        <li key={a.id}>
          <button type="button" className="tile" onClick={() => onPick(a.id)} aria-label={`Use ${a.name}`}>
            <Thumb a={a} />
          </button>
        </li>
      ))}
    </ul>
  );
}
