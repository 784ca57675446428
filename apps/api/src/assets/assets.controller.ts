import { Controller, Delete, Get, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ASSET_LIST, AssetsService } from '#libs/assets';
import { ok, paged, pagination, parseListQuery, type AppConfig } from '#libs/core';
import { JobQueues } from '#libs/queue';
import type { StorageDriver } from '#libs/storage';
import { ApiEnvelope, ApiErrors, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { APP_CONFIG, STORAGE } from '#libs/app';
import { AssetDto, AssetListQuery, UploadAssetDto, UploadedAssetDto } from './assets.dto.js';
import { queueProcessing, receiveUpload } from './upload.js';

/** §4.4: the media library with an API key (docs/assets.md). */
@ApiTags('assets')
@Controller('v1/assets')
export class AssetsController {
  constructor(
    private readonly assets: AssetsService,
    private readonly queues: JobQueues,
    @Inject(STORAGE) private readonly storage: StorageDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Scopes('assets:read')
  @ApiOperation({ summary: 'List the workspace\'s assets, the stock library, or both' })
  @AssetListQuery()
  @ApiEnvelope(AssetDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  async list(@Principal() p: KeyPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(ASSET_LIST, raw);
    const { rows, total } = await this.assets.list(p.workspaceId, q, { orderGiven: raw.order !== undefined });
    return paged(rows.map((r) => this.assets.view(r)), pagination(q, total));
  }

  @Post()
  @Scopes('assets:write')
  @ApiOperation({ summary: 'Upload a file (multipart/form-data); it is processed in the background: poll its status or subscribe to asset.ready / asset.failed' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadAssetDto })
  @ApiEnvelope(UploadedAssetDto, { status: 201 })
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', 'UNSUPPORTED_ASSET', 'ASSET_TOO_LARGE', 'LIMIT_STORAGE')
  async upload(@Principal() p: KeyPrincipal, @Req() req: FastifyRequest) {
    const row = await receiveUpload(req, { workspaceId: p.workspaceId, mode: p.mode, plan: p.plan, assets: this.assets, storage: this.storage, config: this.config });
    await queueProcessing(this.queues, this.assets, row);
    return ok({ id: row.id, url: this.storage.url(row.fileKey) }, `Uploaded as ${row.id}; it is being processed and can be used in renders once its status is ready`);
  }

  @Get(':id')
  @Scopes('assets:read')
  @ApiOperation({ summary: 'Retrieve an asset (own, or in the stock library)' })
  @ApiEnvelope(AssetDto)
  @ApiErrors('ASSET_NOT_FOUND')
  async get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(this.assets.view(await this.assets.get(p.workspaceId, id)));
  }

  @Delete(':id')
  @Scopes('assets:write')
  @ApiOperation({ summary: 'Delete an asset and its stored files; the storage it used is given back' })
  @ApiEnvelope(null, { description: 'Deleted with its files' })
  @ApiErrors('ASSET_NOT_FOUND', 'ASSET_READ_ONLY', 'LIVE_MODE_REQUIRED')
  async delete(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    await this.assets.delete(p.workspaceId, p.mode, id);
    return ok(null, `Asset ${id} deleted with its files; the storage it used is free again`);
  }
}
