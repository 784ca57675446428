import type { Render } from './entities.js';

/**
 * The Shotstack door (decisions.md "Shotstack door"): Shotstack Edit API v1 shapes over our renders,
 * so a Shotstack client switches by changing only its base URL.
 */

/** Shotstack's render statuses; ours map onto them (a cancelled render is Shotstack's `failed`). */
export type ShotstackStatus = 'queued' | 'fetching' | 'rendering' | 'saving' | 'done' | 'failed';

export function shotstackStatus(status: Render['status']): ShotstackStatus {
  return status === 'cancelled' ? 'failed' : (status as ShotstackStatus);
}

/** `POST /render`'s answer (Shotstack's QueuedResponse). */
export function shotstackQueued(row: Pick<Render, 'id'>) {
  return { success: true, message: 'Created', response: { message: 'Render Successfully Queued', id: row.id } };
}

/**
 * `GET /render/{id}`'s answer (Shotstack's RenderResponse). `urls` are the render's file URLs as our
 * record shows them; `data` (the edit as we normalised it) only when asked for with `?data=true`.
 * renderTime is in milliseconds, as Shotstack's.
 */
export function shotstackRender(
  row: Render,
  urls: { url: string | null; posterUrl: string | null; thumbnailUrl: string | null },
  opts: { owner: string; plan: string; data: boolean },
) {
  const error = row.status === 'cancelled' ? 'Cancelled by the caller' : row.error ? `${row.error.code}: ${row.error.message}` : undefined;
  return {
    success: true,
    message: 'OK',
    response: {
      id: row.id,
      owner: opts.owner,
      plan: opts.plan,
      status: shotstackStatus(row.status),
      ...(error === undefined ? {} : { error }),
      ...(row.duration === null ? {} : { duration: row.duration }),
      ...(row.renderTime === null ? {} : { renderTime: row.renderTime }),
      ...(urls.url ? { url: urls.url } : {}),
      ...(urls.posterUrl ? { poster: urls.posterUrl } : {}),
      ...(urls.thumbnailUrl ? { thumbnail: urls.thumbnailUrl } : {}),
      ...(opts.data ? { data: row.edit } : {}),
      created: row.createdAt.toISOString(),
      updated: row.updatedAt.toISOString(),
    },
  };
}
