import { hostname } from 'node:os';
import { Inject, Logger } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { AssetsService } from '#libs/assets';
import { TranscriptionsService } from '#libs/captions';
import type { AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { RenderSweeps } from '#libs/renders';
import { JobQueues } from '#libs/queue';
import { WORKER_CONFIG } from '../tokens.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/** Expired outputs deleted per batch of `renders.purge`. */
const PURGE_BATCH = 500;

/** An upload still `uploading` after this long stopped half-way (a 200 MB upload takes minutes). */
const STALLED_UPLOAD_MS = 60 * 60_000;
/** A transcription unchanged this long while queued or processing has lost its job (the run timeout is 30 minutes). */
const STALLED_TRANSCRIPTION_MS = 45 * 60_000;

/** The `system` queue: the end-to-end ping and the scheduled sweeps. */
@Processor('system')
export class SystemProcessor extends QueueProcessor<'system'> {
  readonly queue = 'system';
  private readonly logger = new Logger('system');

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly credits: CreditsService,
    private readonly sweeps: RenderSweeps,
    private readonly assets: AssetsService,
    private readonly transcriptions: TranscriptionsService,
    private readonly queues: JobQueues,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'system'> = {
    /** Proves a job goes from a producer through Redis to a worker and back. */
    'system.ping': async (data) => ({ nonce: data.nonce, worker: `${hostname()}:${process.pid}`, latencyMs: Date.now() - data.sentAt }),

    /** Every few minutes: releases credit holds of renders that were lost, and reports them. */
    'credits.sweep': async (data) => {
      const released = await this.credits.sweep((data.maxAgeSec ?? this.config.maxRenderAgeSec) * 1000);
      if (released.length) this.logger.log(`released the holds of ${released.length} lost render(s): ${released.join(', ')}`);
      return { released };
    },

    /**
     * Every 10 minutes: deletes expired outputs (decisions.md retention; failed and cancelled renders'
     * files too), a batch at a time, fails stills whose worker died with no API process left waiting
     * (WORKER_LOST, credit released), and removes the chunk folders of settled renders.
     */
    'renders.purge': async (data) => {
      const now = data.now ? new Date(data.now) : new Date();
      const lost = (await this.sweeps.failLostStills(now)).length;
      const chunks = await this.sweeps.sweepChunkFolders();
      if (chunks.length) this.logger.log(`removed ${chunks.length} chunk folder(s) of settled renders`);
      let purged = 0;
      for (;;) {
        const ids = await this.sweeps.purgeExpired(now, PURGE_BATCH);
        purged += ids.length;
        if (ids.length < PURGE_BATCH) return { purged, lost };
      }
    },

    /**
     * Every 15 minutes: uploads that stopped half-way (their record and bytes; the room they held is
     * free again), and stored asset folders no record owns.
     */
    'assets.sweep': async (data) => {
      const now = data.now ? new Date(data.now) : new Date();
      const before = new Date(now.getTime() - STALLED_UPLOAD_MS);
      const uploads = await this.assets.sweepStalledUploads(before);
      const orphans = await this.assets.sweepOrphans(before);
      // Processing whose job is gone (or ended without settling it) is handed to the workers again.
      let requeued = 0;
      for (const id of await this.assets.stalledProcessing(before)) {
        const job = await this.queues.queue('assets').getJob(id);
        const state = job ? await job.getState() : 'unknown';
        if (['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'].includes(state)) continue;
        await this.queues.add('asset.process', { assetId: id }, { jobId: `${id}-${now.getTime()}` });
        requeued++;
      }
      if (requeued) this.logger.log(`queued ${requeued} asset(s) again whose processing was lost`);
      if (uploads.length || orphans.length) this.logger.log(`removed ${uploads.length} upload(s) that stopped half-way and the files of ${orphans.length} asset(s) without a record`);
      return { uploads: uploads.length, orphans: orphans.length };
    },
    'transcriptions.sweep': async (data) => {
      const now = data.now ? new Date(data.now) : new Date();
      let requeued = 0;
      let failed = 0;
      for (const row of await this.transcriptions.stalled(new Date(now.getTime() - STALLED_TRANSCRIPTION_MS))) {
        if (row.route === 'render') {
          // Made inside a video job that died with its worker: the render's next run makes its own.
          await this.transcriptions.fail(row.id, { code: 'TRANSCRIPTION_FAILED', message: 'The worker stopped while transcribing for a render' });
          failed++;
          continue;
        }
        const job = await this.queues.queue('captions').getJob(row.id);
        const state = job ? await job.getState() : 'unknown';
        if (['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'].includes(state)) continue;
        await this.queues.add('transcription.run', { transcriptionId: row.id }, { jobId: `${row.id}-${now.getTime()}` });
        requeued++;
      }
      if (requeued || failed) this.logger.log(`transcriptions: ${requeued} queued again (their job was lost), ${failed} of dead video runs failed`);
      return { requeued, failed };
    },
  };
}
