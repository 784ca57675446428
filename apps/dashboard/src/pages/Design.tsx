// The template designer (issue 29): the edit JSON with completion of what the API accepts and its
// errors on the lines they point at, the field definitions, the name, and a test-mode preview beside
// them (a still; for a video template, the frame at a chosen second) that follows each change.
// Save makes a new version; Publish runs the review.
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { api, ApiFailure, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { cursorAt, lineOfPath, suggestions } from '../edit-json';
import { Link, navigate } from '../router';
import { ErrorNote, Loading, Status, useAction, useLoad } from '../ui';

type Template = components['schemas']['TemplateDetailDto'];
type Field = { key: string; defaultValue?: unknown };

/** How long after the last keystroke the preview is asked for. */
const PREVIEW_DELAY_MS = 400;

interface Problem {
  line?: number;
  path: string;
  message: string;
}

/** A JSON syntax error's line, from the engine's message (`… at position 42` or `(line 3 column 5)`). */
function syntaxProblem(text: string, err: unknown): Problem {
  const message = err instanceof Error ? err.message : String(err);
  const line = /line (\d+)/.exec(message)?.[1];
  const position = /position (\d+)/.exec(message)?.[1];
  return { line: line ? Number(line) : position ? text.slice(0, Number(position)).split('\n').length : undefined, path: 'JSON', message };
}

/** A 422's errors as problems on the lines of the edit (paths `edit.…`) or the fields (`fields…`). */
function problemsOf(err: unknown, editText: string): { edit: Problem[]; other: Problem[] } {
  if (!(err instanceof ApiFailure) || !err.errors) return { edit: [], other: [] };
  const edit: Problem[] = [];
  const other: Problem[] = [];
  for (const [path, messages] of Object.entries(err.errors)) {
    for (const message of messages) {
      if (/^(template\.)?edit(\.|$)/.test(path)) edit.push({ path, message, line: lineOfPath(editText, path) });
      else other.push({ path, message });
    }
  }
  return { edit, other };
}

/** The still the preview draws: the edit itself, or for a video the frame at `second` as a PNG. */
function stillOf(edit: Record<string, unknown>, kind: string, second: number): Record<string, unknown> {
  if (kind === 'image') return edit;
  const output = (edit.output ?? {}) as Record<string, unknown>;
  const { fps: _fps, codec: _codec, repeat: _repeat, mute: _mute, range: _range, thumbnail: _thumbnail, destinations: _destinations, ...still } = output;
  return { ...edit, output: { ...still, format: 'png', poster: { capture: second } } };
}

export function DesignPage({ id }: { id: string }) {
  const loaded = useLoad(() => unwrap(api.GET('/organization/templates/{id}', { params: { path: { id } } })), [id]);
  const t = loaded.data;
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!t) return <Loading what="Loading the template" />;
  return <Designer key={`${t.id}:${t.version}`} t={t} reload={loaded.reload} />;
}

function Designer({ t, reload }: { t: Template; reload: () => void }) {
  const [name, setName] = useState(t.name);
  const [editText, setEditText] = useState(() => JSON.stringify(t.edit, null, 2));
  const [fieldsText, setFieldsText] = useState(() => JSON.stringify(t.fields, null, 2));
  const [second, setSecond] = useState(0);
  const [preview, setPreview] = useState<string>();
  const [problems, setProblems] = useState<{ edit: Problem[]; other: Problem[] }>({ edit: [], other: [] });
  const [offered, setOffered] = useState<{ options: string[]; chosen: number }>({ options: [], chosen: 0 });
  const editor = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLOListElement>(null);
  const previewing = useAction();
  const saving = useAction();
  const seq = useRef(0);
  const caretAfter = useRef<number | null>(null);
  useLayoutEffect(() => {
    const el = editor.current;
    if (caretAfter.current === null || !el) return;
    el.focus();
    el.setSelectionRange(caretAfter.current, caretAfter.current);
    caretAfter.current = null;
  }, [editText]);

  // The preview follows each change: the edit parsed here first (a syntax error needs no round trip).
  useEffect(() => {
    const mine = ++seq.current;
    let edit: Record<string, unknown>;
    let fields: Field[];
    try {
      edit = JSON.parse(editText) as Record<string, unknown>;
    } catch (err) {
      setProblems({ edit: [syntaxProblem(editText, err)], other: [] });
      return;
    }
    try {
      fields = JSON.parse(fieldsText) as Field[];
    } catch (err) {
      setProblems({ edit: [], other: [{ ...syntaxProblem(fieldsText, err), path: 'fields' }] });
      return;
    }
    const values = Object.fromEntries((Array.isArray(fields) ? fields : []).filter((f) => f.defaultValue !== undefined).map((f) => [f.key, f.defaultValue]));
    const timer = setTimeout(() => {
      void previewing.run(async () => {
        try {
          const r = await unwrap(api.POST('/organization/templates/{id}/preview', { params: { path: { id: t.id } }, body: { edit: stillOf(edit, t.kind, second), values } }));
          if (mine !== seq.current) return;
          setProblems({ edit: [], other: [] });
          if (r.url) setPreview(r.url);
        } catch (err) {
          if (mine !== seq.current) return;
          const found = problemsOf(err, editText);
          if (found.edit.length || found.other.length) setProblems(found);
          else throw err;
        }
      });
    }, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
    // previewing.run is stable
  }, [editText, fieldsText, second, t.id, t.kind]);

  const badLines = new Map<number, string[]>();
  for (const p of problems.edit) if (p.line) badLines.set(p.line, [...(badLines.get(p.line) ?? []), `${p.path}: ${p.message}`]);
  const lines = editText.split('\n').length;

  const goToLine = (line: number) => {
    const el = editor.current;
    if (!el) return;
    const offset = editText.split('\n').slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(offset, offset);
  };

  const offer = () => {
    const el = editor.current;
    if (!el) return;
    const options = suggestions(cursorAt(editText, el.selectionStart));
    setOffered({ options, chosen: 0 });
  };

  const accept = (option: string) => {
    const el = editor.current;
    if (!el) return;
    const caret = el.selectionStart;
    const c = cursorAt(editText, caret);
    const quoted = c.inString;
    const numeric = c.expecting === 'value' && option !== '' && !Number.isNaN(Number(option));
    let insert: string;
    let from = c.from;
    if (numeric) {
      if (quoted) from -= 1;
      insert = option;
    } else if (c.expecting === 'key') insert = `${quoted ? '' : '"'}${option}": `;
    else insert = `${quoted ? '' : '"'}${option}"`;
    const next = editText.slice(0, from) + insert + editText.slice(caret);
    // The caret goes after the insertion as the new text is committed (a layout effect), before the next key is handled.
    caretAfter.current = from + insert.length;
    setEditText(next);
    setOffered({ options: [], chosen: 0 });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === ' ' && e.ctrlKey) {
      e.preventDefault();
      offer();
      return;
    }
    if (!offered.options.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = offered.options.length;
      setOffered((o) => ({ ...o, chosen: (o.chosen + (e.key === 'ArrowDown' ? 1 : n - 1)) % n }));
    } else if (e.key === 'Enter' || e.key === 'Tab') {
      e.preventDefault();
      accept(offered.options[offered.chosen]!);
    } else if (e.key === 'Escape') setOffered({ options: [], chosen: 0 });
  };

  const save = () =>
    void saving.run(async () => {
      let edit: Record<string, unknown>;
      let fields: unknown;
      try {
        edit = JSON.parse(editText) as Record<string, unknown>;
        fields = JSON.parse(fieldsText);
      } catch (err) {
        throw new ApiFailure('INVALID_JSON', `Not saved: ${(err as Error).message}`, 0);
      }
      try {
        await unwrap(api.PATCH('/organization/templates/{id}', { params: { path: { id: t.id } }, body: { version: t.version, name, edit, fields: fields as never } }));
      } catch (err) {
        const found = problemsOf(err, editText);
        if (found.edit.length || found.other.length) setProblems(found);
        throw err;
      }
      reload();
    });

  const publish = () =>
    void saving.run(async () => {
      await unwrap(api.POST('/organization/templates/{id}/publish', { params: { path: { id: t.id } }, body: { version: t.version } }));
      navigate(`/templates/${t.id}`);
    });

  return (
    <section>
      <p>
        <Link to={`/templates/${t.id}`}>← {t.name}</Link>
      </p>
      <h1>
        Design {t.name} <Status value={t.status} />
      </h1>
      <p className="muted">
        {t.kind} · version {t.version} · Ctrl+Space completes a field or a value
      </p>
      <div className="designer wide">
        <div className="fields">
          <label>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label htmlFor="edit-json">Edit (JSON)</label>
          <div className="code">
            <ol className="gutter" ref={gutter} aria-hidden="true">
              {Array.from({ length: lines }, (_, i) => (
                <li key={i} data-line={i + 1} className={badLines.has(i + 1) ? 'bad' : undefined} title={badLines.get(i + 1)?.join('\n')}>
                  {i + 1}
                </li>
              ))}
            </ol>
            <textarea
              id="edit-json"
              ref={editor}
              spellCheck={false}
              value={editText}
              rows={Math.min(32, Math.max(12, lines))}
              aria-describedby="edit-problems"
              aria-autocomplete="list"
              aria-controls="edit-completions"
              onChange={(e) => {
                setEditText(e.target.value);
                setOffered({ options: [], chosen: 0 });
              }}
              onKeyDown={onKeyDown}
              onScroll={(e) => {
                if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
              }}
            />
          </div>
          <ul id="edit-completions" role="listbox" aria-label="Completions" className="completions" hidden={!offered.options.length}>
            {offered.options.map((o, i) => (
              <li key={o} role="option" aria-selected={i === offered.chosen} onMouseDown={(e) => (e.preventDefault(), accept(o))}>
                {o}
              </li>
            ))}
          </ul>
          <div id="edit-problems" aria-live="polite">
            {problems.edit.length + problems.other.length > 0 && (
              <ul className="problems" aria-label="Problems">
                {[...problems.edit, ...problems.other].map((p) => (
                  <li key={`${p.path}:${p.message}`}>
                    {p.line ? (
                      <button type="button" className="link" onClick={() => goToLine(p.line!)}>
                        line {p.line}
                      </button>
                    ) : null}{' '}
                    <code>{p.path}</code>: {p.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
          <label>
            Fields (JSON)
            <textarea spellCheck={false} rows={8} value={fieldsText} onChange={(e) => setFieldsText(e.target.value)} />
          </label>
          <p>
            <button type="button" className="primary" disabled={saving.busy} onClick={save}>
              Save as version {t.version + 1}
            </button>{' '}
            <button type="button" disabled={saving.busy} onClick={publish}>
              Publish version {t.version}
            </button>
          </p>
          <ErrorNote error={saving.error} />
        </div>
        <figure className="preview">
          {preview ? <img src={preview} alt={`Preview of ${name}`} /> : <div className="thumb muted">Drawing the preview…</div>}
          {t.kind === 'video' && (
            <label>
              At second
              <input type="number" min={0} step={0.5} value={second} onChange={(e) => setSecond(Math.max(0, Number(e.target.value) || 0))} />
            </label>
          )}
          <figcaption className="muted" role="status">
            {previewing.busy ? 'Updating preview…' : 'Test-mode preview of the unsaved edit (watermarked, free)'}
          </figcaption>
          <ErrorNote error={problems.edit.length || problems.other.length ? undefined : previewing.error} />
        </figure>
      </div>
    </section>
  );
}
