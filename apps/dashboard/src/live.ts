// Live render state: renders still in flight are polled every 2 s until they settle.
import { useEffect, useState } from 'react';
import { api, unwrap } from './api/client';
import type { components } from './api/schema';

export type Render = components['schemas']['RenderDto'];

export const SETTLED = new Set(['done', 'failed', 'cancelled']);

/** `renders` as given, each replaced by its newer state while it runs. */
export function useRenderUpdates(renders: Render[]): Render[] {
  const [fresh, setFresh] = useState<Record<string, Render>>({});
  const running = renders.filter((r) => !SETTLED.has((fresh[r.id] ?? r).status)).map((r) => r.id);
  const key = running.join(',');
  useEffect(() => {
    if (!key) return;
    let live = true;
    const tick = async () => {
      const ids = key.split(',');
      const got = await Promise.all(ids.map((id) => unwrap(api.GET('/v1/render/{id}', { params: { path: { id } } })).catch(() => null)));
      if (!live) return;
      setFresh((f) => ({ ...f, ...Object.fromEntries(got.filter((r): r is Render => r !== null).map((r) => [r.id, r])) }));
    };
    const t = setInterval(() => void tick(), 2000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [key]);
  return renders.map((r) => fresh[r.id] ?? r);
}
