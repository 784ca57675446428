// Live render state: while a render shown is in flight, its view is reloaded every 2 s
// (one request for a whole gallery: the session's ceiling is 600 requests a minute).
import { useEffect } from 'react';
import type { components } from './api/schema';

export type Render = components['schemas']['RenderDto'];

export const SETTLED = new Set(['done', 'failed', 'cancelled']);

/** Calls `reload` every `ms` while `running` holds. */
export function usePollWhile(running: boolean, reload: () => void, ms = 2000): void {
  useEffect(() => {
    if (!running) return;
    const t = setInterval(reload, ms);
    return () => clearInterval(t);
  }, [running, reload, ms]);
}
