// Shared pieces of the pages: loading, empty and error states, data loading, small formatters.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { ApiFailure } from './api/client';

/** The §7 envelope as a user reads it: the message and its code. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const o = error as { code?: unknown; message?: unknown; errors?: Record<string, string[]> };
  const e = error instanceof ApiFailure ? error : new ApiFailure(String(o.code ?? 'ERROR'), String(o.message ?? error), 0, o.errors);
  return (
    <div className="error" role="alert">
      <strong>{e.message}</strong> <code>{e.code}</code>
      {e.errors && (
        <ul>
          {Object.entries(e.errors).map(([path, msgs]) => (
            <li key={path}>
              <code>{path}</code>: {msgs.join('; ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The 422's `errors` entries for one field: its path and anything under it (`headers` → `headers[1].key`). */
export const errorsAt = (error: unknown, path: string) =>
  error instanceof ApiFailure && error.errors ? Object.entries(error.errors).filter(([k]) => k === path || k.startsWith(`${path}[`) || k.startsWith(`${path}.`)) : [];

/** Where a form shows a failed save's 422 beside its fields: the error, and the id of a field's message. */
export interface Problems {
  error: unknown;
  id: (path: string) => string;
}

/** A field's message, under it; nothing when the field is fine or the form shows no per-field messages. */
export function FieldErrors({ problems, path }: { problems: Problems | undefined; path: string }) {
  if (!problems) return null;
  const lines = errorsAt(problems.error, path);
  if (lines.length === 0) return null;
  return (
    <span className="field-error" id={problems.id(path)}>
      {lines.map(([k, msgs]) => `${k === path ? '' : `${k}: `}${msgs.join('; ')}`).join(' · ')}
    </span>
  );
}

/** A field's own attributes pointing at its message (when it has one). */
export const described = (problems: Problems | undefined, path: string) => (problems && errorsAt(problems.error, path).length > 0 ? { 'aria-invalid': true, 'aria-describedby': problems.id(path) } : {});

export const Loading = ({ what = 'Loading' }: { what?: string }) => (
  <p className="muted" role="status" aria-live="polite">
    {what}…
  </p>
);

export const Empty = ({ children }: { children: ReactNode }) => <div className="empty">{children}</div>;

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; `reload()` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    setLoading(true);
    loadRef.current().then(
      (d) => live && (setData(d), setError(undefined), setLoading(false)),
      (e: unknown) => live && (setError(e), setLoading(false)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Runs an action, keeping its error and busy state for the button that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** A count of credits in words: "1 credit", "3 credits". */
export const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

export function bytes(n: number | null | undefined): string {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false));
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** A status as a badge (colour and the word: never colour alone). */
export const Status = ({ value }: { value: string }) => <span className={`badge s-${value}`}>{value}</span>;

/**
 * The mark of a record made in test mode (a render, and any record with a `mode`): the word "test" in the
 * test-mode colour; nothing for a live record (live is the normal case, as in peers' dashboards).
 */
export const ModeBadge = ({ mode }: { mode: string | null | undefined }) =>
  mode === 'test' ? (
    <span className="badge mode-test" title="Made in test mode: free, watermarked, reaches no real customer">
      test
    </span>
  ) : null;

/** What a render or a template makes. */
export const KINDS = ['image', 'video'] as const;

/** A filter bar's choice: "any" (the empty value) or one of `options`, each shown as its value. */
export function FilterSelect({ label, value, options, onChange }: { label: string; value: string; options: readonly string[]; onChange: (value: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </label>
  );
}

/** A fieldset of checkboxes choosing any of `options` (scopes, events); `children` follow the boxes (a field's errors). */
export function CheckboxGroup<T extends string>({ legend, options, selected, onChange, children }: {
  legend: string;
  options: readonly T[];
  selected: readonly T[];
  onChange: (selected: T[]) => void;
  children?: ReactNode;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="checks">
        {options.map((o) => (
          <label key={o}>
            <input type="checkbox" checked={selected.includes(o)} onChange={(e) => onChange(e.target.checked ? [...selected, o] : selected.filter((x) => x !== o))} /> {o}
          </label>
        ))}
      </div>
      {children}
    </fieldset>
  );
}

/** A table that scrolls sideways on a narrow screen: a header row of column names over the caller's rows. */
export function Table({ columns, children }: { columns: readonly string[]; children: ReactNode }) {
  // On a phone each row is stacked as a card (style.css), every cell labelled with its column's name
  // (data-label, shown before it): no column, and no action, is off the screen. The roles are
  // explicit because a table whose cells are displayed as blocks may lose them in the browser.
  const ref = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    for (const row of ref.current?.tBodies[0]?.rows ?? []) {
      row.setAttribute('role', 'row');
      [...row.cells].forEach((cell, i) => {
        cell.setAttribute('role', 'cell');
        if (columns[i]) cell.dataset.label = columns[i];
      });
    }
  });
  return (
    <div className="table">
      <table ref={ref} role="table">
        <thead>
          <tr role="row">
            {columns.map((c) => (
              <th key={c} scope="col" role="columnheader">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A button whose action asks first: the first click shows what goes (`question`) with Confirm and
 * Cancel beside it; only Confirm runs `onConfirm`. Named for the item it acts on (`label`).
 */
export function ConfirmButton({ label, question, busy, onConfirm, children }: { label: string; question: string; busy?: boolean; onConfirm: () => void; children: ReactNode }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" aria-label={label} disabled={busy} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={label}>
      <span>{question}</span>{' '}
      <button type="button" className="danger" disabled={busy} onClick={() => (setAsking(false), onConfirm())}>
        Confirm
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
