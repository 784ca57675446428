import type { StorageDriver } from '#libs/storage';
import type { OrmRenderRepository } from './adapters/orm-renders.js';
import type { RenderLifecycle } from './lifecycle.js';
import type { RenderRepository, Storage } from './ports.js';

/** A still still working after this long lost its worker (a still takes well under a minute). */
export const LOST_STILL_AFTER_MS = 5 * 60_000;

/** A chunked render's folder of chunk files in storage: `work/chunks/<renderId>-<token>/` (video-runs.ts `chunkFolder`). */
const CHUNK_FOLDER = /^work\/chunks\/([^/-]+)-[^/]+\//;

/**
 * Removes the chunk folders in storage of renders that are settled (or gone): a chunked render's
 * files are deleted when it settles, but a worker killed while storing a chunk, or a chunk finishing
 * after its render was cancelled, leaves them behind. A render still working keeps its folder, on any
 * machine. Answers the folders removed.
 */
export async function sweepChunkFolders(renders: Pick<RenderRepository, 'working'>, storage: Pick<Storage, 'list' | 'deletePrefix'>): Promise<string[]> {
  const folders = new Map<string, string>();
  for await (const file of storage.list('work/chunks/')) {
    const m = CHUNK_FOLDER.exec(file.key);
    if (m) folders.set(m[0], m[1]!);
  }
  if (!folders.size) return [];
  const working = await renders.working([...new Set(folders.values())]);
  const removed: string[] = [];
  for (const [folder, renderId] of folders) {
    if (working.has(renderId)) continue;
    await storage.deletePrefix(folder);
    removed.push(folder);
  }
  return removed;
}

/** The scheduled sweeps of renders (the system queue's `renders.purge`). */
export class RenderSweeps {
  constructor(
    private readonly renders: OrmRenderRepository,
    private readonly lifecycle: RenderLifecycle,
    private readonly storage: StorageDriver,
  ) {}

  /** Deletes expired outputs (decisions.md retention; failed and cancelled renders' files too), `batch` at a time. */
  purgeExpired(now = new Date(), batch = 500): Promise<string[]> {
    return this.renders.purgeExpired(this.storage, now, batch);
  }

  /**
   * Settles stills whose worker and waiting API process both died (status still working long after
   * creation) as failed `WORKER_LOST`, releasing their credits.
   */
  async failLostStills(now = new Date(), batch = 500): Promise<string[]> {
    return this.lifecycle.failLostStills(await this.renders.staleStills(new Date(now.getTime() - LOST_STILL_AFTER_MS), batch));
  }

  sweepChunkFolders(): Promise<string[]> {
    return sweepChunkFolders(this.renders, this.storage);
  }
}
