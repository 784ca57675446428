import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Inject } from '@nestjs/common';
import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { assetKey, assetPrefix, AssetsService, type Asset, type AssetFindings } from '#libs/assets';
import type { AppConfig } from '#libs/core';
import { ASSET_HEAD_BYTES, AssetRejected, DEFAULT_ASSET_LIMITS, detectAssetType, inspectAsset, readHead } from '#libs/media';
import { isWorkerLost, type TypedJob } from '#libs/queue';
import { StoredFileNotFoundError, type StorageDriver } from '#libs/storage';
import { STORAGE, WORKER_CONFIG } from '../tokens.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `assets` queue: an uploaded file becomes `ready` or `failed` (§3, docs/assets.md). Its bytes
 * are copied from storage into the worker's own folder, typed again from their bytes, inspected under
 * limits (libs/media `inspectAsset`: dimensions, duration, thumbnail or waveform, a font's family, an
 * SVG sanitised, a Lottie checked); what it derives is stored beside the file. A file that is not
 * what it claims, is cut short or is over a limit fails with the reason; a crash or an outage runs
 * the job again (3 runs), then the asset fails. A file whose worker died is not processed again (it
 * may be what killed it; maxStalledCount 0): the asset fails WORKER_LOST with the reason.
 */
@Processor('assets')
export class AssetsProcessor extends QueueProcessor<'assets'> {
  readonly queue = 'assets';

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    @Inject(STORAGE) private readonly storage: StorageDriver,
    private readonly assets: AssetsService,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'assets'> = {
    'asset.process': (data, job) => this.processAsset(data.assetId, job),
  };

  private async processAsset(id: string, job: TypedJob<'asset.process'>): Promise<{ status: string }> {
    const row = await this.assets.byId(id);
    if (!row || row.status !== 'processing') return { status: row?.status ?? 'gone' };
    const work = join(this.config.dataDir, 'asset-work');
    await mkdir(work, { recursive: true });
    const dir = await mkdtemp(join(work, `${id}-`));
    const written: string[] = [];
    try {
      const file = join(dir, 'upload');
      await pipeline(await this.storage.read(row.uploadKey ?? row.fileKey), createWriteStream(file));
      const detected = detectAssetType(await readHead(file, ASSET_HEAD_BYTES));
      if (!detected || detected.type !== row.type) throw new AssetRejected('The stored file is not the type it was uploaded as');
      const found = await inspectAsset(file, detected, DEFAULT_ASSET_LIMITS);
      const findings: AssetFindings = {
        width: found.width, height: found.height, durationSec: found.durationSec, fontFamily: found.fontFamily ?? null,
        ...(found.detected ? { type: found.detected.type, mimeType: found.detected.mimeType } : {}),
      };
      const store = async (bytes: Buffer, suffix: string) => {
        const key = assetKey(id, suffix);
        written.push(key);
        await this.storage.put(key, bytes);
        return key;
      };
      if (found.thumbnail) findings.thumbnailKey = await store(found.thumbnail.bytes, `-thumb.${found.thumbnail.ext}`);
      if (found.waveform) findings.waveformKey = await store(found.waveform.bytes, `-wave.${found.waveform.ext}`);
      if (found.lottie) findings.meta = { lottie: found.lottie };
      if (row.uploadKey) {
        // An SVG: what is served is the sanitised copy, written where the asset's URL points.
        written.push(row.fileKey);
        await this.storage.put(row.fileKey, found.sanitized ?? createReadStream(file));
      }
      if (!(await this.assets.markReady(id, findings))) {
        // Deleted (or settled) meanwhile: nothing of this run stays behind.
        await this.cleanUp(row, written);
        return { status: 'gone' };
      }
      if (row.uploadKey) await this.storage.delete(row.uploadKey).catch(() => undefined);
      return { status: 'ready' };
    } catch (err: unknown) {
      await this.cleanUp(row, written);
      if (err instanceof AssetRejected) {
        await this.assets.markFailed(id, { code: 'ASSET_INVALID', message: err.reason });
        return { status: 'failed' };
      }
      if (err instanceof StoredFileNotFoundError) {
        await this.assets.markFailed(id, { code: 'ASSET_INVALID', message: 'The uploaded file is no longer in storage' });
        return { status: 'failed' };
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        await this.assets.markFailed(id, { code: 'PROCESSING_FAILED', message: 'The file could not be processed; upload it again' });
      }
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** An asset job whose worker died: the asset fails, once, with the reason (its upload stays for the sweep). */
  @OnWorkerEvent('failed')
  failLost(job: Job | undefined, err: Error): void {
    const assetId = (job?.data as { assetId?: string } | undefined)?.assetId;
    if (!assetId || !isWorkerLost(err)) return;
    this.log.warn(`asset ${assetId}: its worker stopped while processing it; it is not processed again`);
    void this.assets.markFailed(assetId, { code: 'WORKER_LOST', message: 'The worker processing this file stopped; it is not processed again. Upload a smaller or simpler file' }).catch(() => undefined);
  }

  /** Removes what a run stored (thumbnails, the sanitised SVG), or the whole folder when the asset is gone. */
  private async cleanUp(row: Asset, written: readonly string[]): Promise<void> {
    const still = await this.assets.byId(row.id);
    if (!still) {
      await this.storage.deletePrefix(assetPrefix(row.id)).catch(() => undefined);
      return;
    }
    await Promise.all(written.map((k) => this.storage.delete(k).catch(() => undefined)));
  }
}
