import type { AssetsService } from '#libs/assets';
import { ApiError } from '#libs/core';
import { forWorkspace, type Orm } from '#libs/db';
import { Render } from '#libs/renders';
import type { SourceLookup } from './captions.service.js';
import type { StoredSources } from './runner.js';

const AUDIO_FORMATS: Record<string, string> = {
  'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/ogg': 'ogg', 'audio/flac': 'flac', 'audio/mp4': 'm4a',
  'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
};

/** Where captions find their recordings: assets (own or stock) and finished video renders of the workspace. */
export function captionSources(assets: AssetsService, orm: Orm): SourceLookup & StoredSources {
  const invalid = (field: string, why: string) => new ApiError('VALIDATION_FAILED', `${field}: ${why}`, { errors: { [field]: [why] } });
  const render = async (workspaceId: string, id: string) => {
    const row = await forWorkspace(orm, workspaceId).findOne(Render, { id });
    if (!row) throw new ApiError('RENDER_NOT_FOUND', `No render ${id} in this workspace`);
    return row;
  };
  return {
    async asset(workspaceId, id) {
      const row = await assets.get(workspaceId, id);
      if (row.type !== 'audio' && row.type !== 'video') throw invalid('assetId', `is ${row.type === 'image' ? 'an' : 'a'} ${row.type}; an audio or video asset is needed`);
      if (row.status !== 'ready') throw invalid('assetId', `is ${row.status}; transcribe it once it is ready`);
      return { kind: row.type, format: AUDIO_FORMATS[row.mimeType] ?? row.mimeType, sizeBytes: row.sizeBytes, durationSec: row.durationSec == null ? undefined : Number(row.durationSec) };
    },
    async render(workspaceId, id) {
      const row = await render(workspaceId, id);
      if (row.status !== 'done') throw invalid('renderId', `is ${row.status}; transcribe it once it is done`);
      if (row.kind !== 'video' || row.format !== 'mp4') throw invalid('renderId', `is ${row.kind === 'image' ? 'an image' : `a ${row.format}`}: it has no audio track`);
      if (!row.outputKey || row.purgedAt) throw invalid('renderId', 'its output has expired');
      // Its audio track goes to the engine as 16 kHz mono 16-bit WAV (32 kB a second).
      const sec = Number(row.duration ?? 0);
      return { kind: 'audio', format: 'wav', sizeBytes: Math.ceil(sec * 32_000) + 44, durationSec: sec || undefined };
    },
    async assetFileKey(workspaceId, id) {
      const row = (await assets.findMany(workspaceId, [id])).get(id);
      return row && row.status === 'ready' ? row.fileKey : null;
    },
    async renderOutputKey(workspaceId, id) {
      const row = await forWorkspace(orm, workspaceId).findOne(Render, { id });
      return row && !row.purgedAt ? (row.outputKey ?? null) : null;
    },
  };
}
