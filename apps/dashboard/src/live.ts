// Live render state. The workspace's feed (GET /v1/renders/events: server-sent events of render.*
// and render.progress) read through fetch, because EventSource cannot send the session's bearer
// token; while it is down (or before it connects), a view polls its one request every 2 s while
// something in it is in flight (never one request per render: the account's ceiling is 600 a minute).
import { useEffect, useRef, useState } from 'react';
import { API_BASE, refreshSession, sessionHeaders } from './api/client';
import type { components } from './api/schema';

export type Render = components['schemas']['RenderDto'];

export const SETTLED = new Set(['done', 'failed', 'cancelled']);

/** One message of the feed: a render event (§6) or a running render's progress figure. */
export interface FeedMessage {
  id?: string;
  type: string;
  data: { id: string; status?: string; progress?: number };
}

type Listener = (m: FeedMessage) => void;

const listeners = new Set<Listener>();
let connected = false;
const connectedListeners = new Set<(c: boolean) => void>();
let stop: (() => void) | null = null;

function setConnected(c: boolean) {
  connected = c;
  for (const l of connectedListeners) l(c);
}

/** Reads `text/event-stream` frames from a fetch body, calling `onFrame` with each frame's fields. */
async function readFrames(body: ReadableStream<Uint8Array>, onFrame: (f: { id?: string; event?: string; data: string }) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const f: { id?: string; event?: string; data: string } = { data: '' };
      for (const line of frame.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue; // comments (heartbeats) and blank lines
        const field = line.slice(0, colon);
        const v = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') f.data += v;
        else if (field === 'id') f.id = v;
        else if (field === 'event') f.event = v;
      }
      if (f.data) onFrame(f);
    }
  }
}

/**
 * Keeps one connection to the feed while anyone listens (a workspace switch or a sign-out unmounts every
 * listener, so the next one connects with the new headers); reconnects after 3 s with Last-Event-ID.
 */
function connect(): () => void {
  let closed = false;
  let abort = new AbortController();
  let lastId: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async () => {
    try {
      abort = new AbortController();
      let res = await open(abort.signal, lastId);
      if (res.status === 401 && (await refreshSession())) res = await open(abort.signal, lastId);
      if (!res.ok || !res.body) throw new Error(`feed answered ${res.status}`);
      setConnected(true);
      await readFrames(res.body, (f) => {
        if (f.id) lastId = f.id;
        const m = JSON.parse(f.data) as FeedMessage;
        for (const l of listeners) l(m);
      });
    } catch {
      // reconnect below
    }
    setConnected(false);
    if (!closed) timer = setTimeout(() => void run(), 3000);
  };
  void run();
  return () => {
    closed = true;
    clearTimeout(timer);
    abort.abort();
    setConnected(false);
  };
}

function open(signal: AbortSignal, lastId: string | undefined): Promise<Response> {
  return fetch(`${API_BASE}/v1/renders/events`, { headers: { accept: 'text/event-stream', ...sessionHeaders(), ...(lastId ? { 'last-event-id': lastId } : {}) }, signal });
}

/** Calls `onMessage` with each message of the feed while mounted; true while the feed is connected. */
export function useRenderFeed(onMessage: Listener): boolean {
  const ref = useRef(onMessage);
  ref.current = onMessage;
  const [up, setUp] = useState(connected);
  useEffect(() => {
    const l: Listener = (m) => ref.current(m);
    listeners.add(l);
    connectedListeners.add(setUp);
    stop ??= connect();
    return () => {
      listeners.delete(l);
      connectedListeners.delete(setUp);
      if (listeners.size === 0) {
        stop?.();
        stop = null;
      }
    };
  }, []);
  return up;
}

/** Calls `reload` every `ms` while `running` holds. */
export function usePollWhile(running: boolean, reload: () => void, ms = 2000): void {
  useEffect(() => {
    if (!running) return;
    const t = setInterval(reload, ms);
    return () => clearInterval(t);
  }, [running, reload, ms]);
}

/**
 * `renders` with the feed applied: progress figures patched in place, and `reload` (debounced)
 * on any other render event, so a new or settled render shows with its whole record; polling only
 * while the feed is down.
 */
export function useLiveRenders(renders: Render[], reload: () => void, relevant: (id: string) => boolean = () => true): Render[] {
  const [progress, setProgress] = useState<Record<string, number>>({});
  const debounce = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(debounce.current), []);
  const up = useRenderFeed((m) => {
    if (!relevant(m.data.id)) return;
    if (m.type === 'render.progress') {
      if (typeof m.data.progress === 'number') setProgress((p) => ({ ...p, [m.data.id]: m.data.progress! }));
      return;
    }
    clearTimeout(debounce.current);
    debounce.current = setTimeout(reload, 250);
  });
  usePollWhile(!up && renders.some((r) => !SETTLED.has(r.status)), reload);
  return renders.map((r) => {
    const p = progress[r.id];
    return p !== undefined && !SETTLED.has(r.status) && p > r.progress ? { ...r, progress: p, status: r.status === 'queued' || r.status === 'fetching' ? 'rendering' : r.status } : r;
  });
}
