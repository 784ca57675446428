// The dashboard's API client: openapi-fetch over the types openapi-typescript generates from the
// committed openapi.json (`npm run dashboard:client`), so a changed route breaks `npm run lint` here.
// Every request carries the session's access token and the chosen workspace (X-Service-Org); an
// expired or signed-out token is refreshed once, silently, and the request retried.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

export type { paths };

/** The §7 error envelope as the dashboard shows it: the message with its code. */
export class ApiFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly errors?: Record<string, string[]>,
  ) {
    super(message);
  }
}

export const API_BASE = '/api';

/** The mode the dashboard's calls are made in (X-Service-Mode): live, or test (a test key's sandbox). */
export type Mode = 'live' | 'test';

interface SessionState {
  /** Access token (12 h): in memory only, regained after a reload by one refresh (docs/decisions.md "Dashboard"). */
  token: string | null;
  workspaceId: string | null;
  mode: Mode;
}

/**
 * The refresh token is never seen by this code: with this header the API keeps it in an HttpOnly,
 * SameSite=Strict cookie on /api/auth (decisions.md "Sessions (dashboard)").
 */
export const CLIENT_HEADER = { 'x-service-client': 'dashboard' } as const;

/** The mode chosen last in this browser: a preference, not a secret (decisions.md "Test mode (issue 28): dashboard previews and the mode switch"). */
const MODE_KEY = 'mr.mode';
const state: SessionState = { token: null, workspaceId: null, mode: localStorage.getItem(MODE_KEY) === 'test' ? 'test' : 'live' };
const listeners = new Set<() => void>();

export const session = {
  get token() {
    return state.token;
  },
  get workspaceId() {
    return state.workspaceId;
  },
  get mode() {
    return state.mode;
  },
  /** Switches every later call (and the event stream, reopened by the pages) to `mode`, remembered in this browser. */
  setMode(mode: Mode) {
    localStorage.setItem(MODE_KEY, mode);
    session.set({ mode });
  },
  set(patch: Partial<SessionState>) {
    Object.assign(state, patch);
    for (const l of listeners) l();
  },
  clear() {
    session.set({ token: null });
  },
  subscribe(l: () => void) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

let refreshing: Promise<boolean> | null = null;

/** Rotates the refresh cookie for a new access token; false when there is no session (or it is over). */
export function refreshSession(): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const res = await fetch(`${API_BASE}/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...CLIENT_HEADER },
        body: '{}',
        credentials: 'same-origin',
      });
      if (!res.ok) return false;
      const body = (await res.json()) as { data: { token: string } };
      session.set({ token: body.data.token });
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

/** Headers of the session: the bearer token, the workspace and the mode. */
export function sessionHeaders(): Record<string, string> {
  const h: Record<string, string> = { 'x-service-mode': state.mode };
  if (state.token) h.authorization = `Bearer ${state.token}`;
  if (state.workspaceId) h['x-service-org'] = state.workspaceId;
  return h;
}

const retried = new WeakSet<Request>();
/** An unread copy of each request, kept until its answer (a body is read once, by the first try). */
const copies = new WeakMap<Request, Request>();

const auth: Middleware = {
  onRequest({ request }) {
    for (const [k, v] of Object.entries(sessionHeaders())) request.headers.set(k, v);
    copies.set(request, request.clone());
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status !== 401 || retried.has(request) || request.url.includes('/auth/')) return response;
    const code = ((await response.clone().json().catch(() => ({}))) as { code?: string }).code;
    if (code !== 'TOKEN_EXPIRED' && code !== 'INVALID_TOKEN') return response;
    if (!(await refreshSession())) {
      session.clear();
      return response;
    }
    const again = copies.get(request) ?? new Request(request);
    retried.add(again);
    for (const [k, v] of Object.entries(sessionHeaders())) again.headers.set(k, v);
    return fetch(again);
  },
};

export const api = createClient<paths, 'application/json'>({ baseUrl: API_BASE });
api.use(auth);

type Envelope = { success: boolean; message?: string; code?: string; errors?: Record<string, string[]> };

/** The whole success envelope (lists: with `pagination` or `nextPageToken`), or an ApiFailure carrying its code and message. */
export async function envelope<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (err) {
    throw new ApiFailure('NETWORK_ERROR', `The API could not be reached (${(err as Error).message})`, 0);
  }
  if (result.error !== undefined || !result.response.ok) {
    const e = (result.error ?? {}) as Envelope;
    throw new ApiFailure(e.code ?? `HTTP_${result.response.status}`, e.message ?? result.response.statusText, result.response.status, e.errors);
  }
  return result.data as T;
}

/** The envelope's `data`. */
export async function unwrap<T extends { data: unknown }>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T['data']> {
  return (await envelope(call)).data;
}
