import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { Link, navigate } from '../router';
import { ErrorNote, Loading, Status, useAction, useLoad } from '../ui';
import { AssetPicker } from './Media';

type Field = components['schemas']['FieldDefinitionDto'] & { defaultValue?: unknown };
type Values = Record<string, unknown>;

/** One input per field type of the schema (docs/templates.md): text, colour, number, select, boolean, media. */
function FieldInput({ field, value, onChange }: { field: Field; value: unknown; onChange: (v: unknown) => void }) {
  const id = `field-${field.key}`;
  const c = field.config ?? {};
  const label = (
    <label htmlFor={id}>
      {field.label}
      {field.required && <span aria-hidden="true"> *</span>}
    </label>
  );
  switch (field.type) {
    case 'text':
      return (
        <div className="field">
          {label}
          {c.multiline ? (
            <textarea id={id} maxLength={c.maxLength} required={field.required} value={String(value ?? '')} placeholder={field.placeholder} onChange={(e) => onChange(e.target.value)} />
          ) : (
            <input id={id} maxLength={c.maxLength} required={field.required} value={String(value ?? '')} placeholder={field.placeholder} onChange={(e) => onChange(e.target.value)} />
          )}
          {c.maxLength !== undefined && (
            <small className="muted">
              {String(value ?? '').length}/{c.maxLength}
            </small>
          )}
        </div>
      );
    case 'color':
      return (
        <div className="field">
          {label}
          <input id={id} type="color" value={typeof value === 'string' && /^#[0-9a-f]{6}$/i.test(value) ? value : '#000000'} onChange={(e) => onChange(e.target.value)} />
        </div>
      );
    case 'number':
      return (
        <div className="field">
          {label}
          <input id={id} type="number" min={c.min} max={c.max} step={c.step ?? (c.integer ? 1 : 'any')} value={value === undefined || value === null ? '' : String(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))} />
        </div>
      );
    case 'select':
      return (
        <div className="field">
          {label}
          <select id={id} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)}>
            {!field.required && <option value="">—</option>}
            {(c.options ?? []).map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </div>
      );
    case 'boolean':
      return (
        <div className="field">
          <label>
            <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {field.label}
          </label>
        </div>
      );
    default:
      return (
        <div className="field">
          {label}
          <input id={id} value={String(value ?? '')} placeholder="https://… or ast_…" onChange={(e) => onChange(e.target.value)} />
          <AssetPicker type={field.type as 'image' | 'video' | 'audio'} label={field.label} onPick={(assetId) => onChange(assetId)} />
        </div>
      );
  }
}

/** Leaves out fields left empty, so the template's defaults apply. */
function filled(values: Values): Values {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '' && v !== undefined));
}

export function TemplatePage({ id }: { id: string }) {
  const loaded = useLoad(() => unwrap(api.GET('/organization/templates/{id}', { params: { path: { id } } })), [id]);
  const [values, setValues] = useState<Values>({});
  const [preview, setPreview] = useState<string>();
  const previewing = useAction();
  // A video template's draft (issue 29): a small test-mode video made on demand, polled until it settles.
  const [draft, setDraft] = useState<{ id: string; status: string; url: string | null }>();
  const drafting = useAction();
  useEffect(() => {
    if (!draft || ['done', 'failed', 'cancelled'].includes(draft.status)) return;
    const timer = setTimeout(() => {
      void drafting.run(async () => {
        const r = await unwrap(api.GET('/v1/render/{id}', { params: { path: { id: draft.id } } }));
        setDraft({ id: r.id, status: r.status, url: r.url ?? null });
      });
    }, 1000);
    return () => clearTimeout(timer);
    // drafting.run is stable
  }, [draft]);
  const rendering = useAction();
  const lifecycle = useAction();
  const t = loaded.data;

  useEffect(() => {
    if (t) setValues(Object.fromEntries((t.fields as Field[]).map((f) => [f.key, f.defaultValue ?? ''])));
  }, [t]);

  // The still preview 600 ms after the last change: a test-mode still (free, watermarked) that is not one of the
  // workspace's renders: not listed, no webhook or event (decisions.md "Test mode (issue 28): dashboard previews
  // and the mode switch").
  const seq = useRef(0);
  useEffect(() => {
    // Any template the workspace can read: a library one before it is copied, a draft before it is published (issue 29).
    if (!t || t.kind !== 'image') return;
    const mine = ++seq.current;
    const timer = setTimeout(() => {
      void previewing.run(async () => {
        const r = await unwrap(api.POST('/organization/templates/{id}/preview', { params: { path: { id: t.id } }, body: { values: filled(values) } }));
        if (mine === seq.current && r.url) setPreview(r.url);
      });
    }, 600);
    return () => clearTimeout(timer);
    // previewing.run is stable
  }, [t, values]);

  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!t) return <Loading what="Loading the template" />;
  const fields = t.fields as Field[];

  const render = () =>
    void rendering.run(async () => {
      const r = await unwrap(api.POST('/v1/render', { body: { templateId: t.id, values: filled(values) } }));
      navigate(`/renders/${r.id}`);
    });

  return (
    <section>
      <p>
        <Link to="/templates">← Templates</Link>
      </p>
      <h1>
        {t.name} <Status value={t.status} />
      </h1>
      <p className="muted">
        {t.kind} · {t.width}×{t.height} · version {t.version}
        {t.isOwn && (
          <>
            {' · '}
            <Link to={`/templates/${t.id}/design`}>Design</Link>
          </>
        )}
      </p>
      {!t.isOwn && (
        <p>
          A library template: try your values in the preview, then make it yours to publish and render it.{' '}
          <button
            type="button"
            className="primary"
            disabled={lifecycle.busy}
            onClick={() => void lifecycle.run(async () => navigate(`/templates/${(await unwrap(api.POST('/organization/templates/{id}/duplicate', { params: { path: { id } } }))).id}`))}
          >
            Duplicate to my templates
          </button>
        </p>
      )}
      {t.isOwn && t.status !== 'published' && (
        <p>
          Drafts render only once published.{' '}
          <button
            type="button"
            disabled={lifecycle.busy}
            onClick={() => void lifecycle.run(async () => (await unwrap(api.POST('/organization/templates/{id}/publish', { params: { path: { id } }, body: { version: t.version } })), loaded.reload()))}
          >
            Publish
          </button>
        </p>
      )}
      <ErrorNote error={lifecycle.error} />
      <div className="designer">
        <form
          className="fields"
          onSubmit={(e) => {
            e.preventDefault();
            render();
          }}
        >
          {fields.map((f) => (
            <FieldInput key={f.key} field={f} value={values[f.key]} onChange={(v) => setValues((old) => ({ ...old, [f.key]: v }))} />
          ))}
          {t.isOwn && (
            <button type="submit" className="primary" disabled={rendering.busy || t.status !== 'published'}>
              Render
            </button>
          )}
          <ErrorNote error={rendering.error} />
        </form>
        <figure className="preview">
          {preview ? <img src={preview} alt={`Preview of ${t.name}`} /> : t.previewUrl ? <img src={t.previewUrl} alt={`Preview of ${t.name}`} /> : <div className="thumb muted">No preview</div>}
          <figcaption className="muted" role="status">
            {previewing.busy ? 'Updating preview…' : t.kind === 'image' ? 'Test-mode preview (watermarked, free)' : draft ? (draft.status === 'done' ? 'Draft (small, 12 fps, watermarked, free)' : `Drawing the draft… (${draft.status})`) : 'A draft plays a small, free version of the video'}
          </figcaption>
          {t.kind === 'video' && (
            <>
              {draft?.status === 'done' && draft.url && <video src={draft.url} controls autoPlay muted playsInline aria-label={`Draft of ${t.name}`} data-render={draft.id} />}
              <button
                type="button"
                disabled={drafting.busy || (!!draft && !['done', 'failed', 'cancelled'].includes(draft.status))}
                onClick={() =>
                  void drafting.run(async () => {
                    const r = await unwrap(api.POST('/organization/templates/{id}/preview', { params: { path: { id: t.id } }, body: { values: filled(values), draft: true } }));
                    setDraft({ id: r.id, status: r.status, url: r.url ?? null });
                  })
                }
              >
                {draft ? 'Draw the draft again' : 'Play a draft'}
              </button>
              {draft?.status === 'failed' && <p className="error">The draft could not be drawn; render the template to see why.</p>}
            </>
          )}
          <ErrorNote error={previewing.error ?? drafting.error} />
        </figure>
      </div>
    </section>
  );
}
