import { ApiError } from '#libs/core';
import { forWorkspace, type Orm } from '#libs/db';
import { Render } from './entities.js';
import type { RenderLifecycle } from './lifecycle.js';

/** A render as another library sees it (libs/messaging sends its output): its state and its output's URL. */
export interface RenderSummary {
  status: string;
  kind: string;
  format: string;
  /** Null until it is done, and again once its output was purged. */
  url: string | null;
}

/** The renders of a workspace for the libraries that use them (libs/messaging's `render`). */
export class RenderSummaries {
  constructor(private readonly orm: Orm, private readonly lifecycle: Pick<RenderLifecycle, 'eventData'>) {}

  /** One render of the workspace; 404 RENDER_NOT_FOUND for any other id (another workspace's included). */
  async of(workspaceId: string, id: string): Promise<RenderSummary> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(Render, { id });
    if (!row) throw new ApiError('RENDER_NOT_FOUND', `No render ${id} in this workspace`);
    return { status: row.status, kind: row.kind, format: row.format, url: row.purgedAt ? null : (this.lifecycle.eventData(row).url as string | null) };
  }
}
