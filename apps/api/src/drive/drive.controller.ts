import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AssetsService } from '#libs/assets';
import { cursorPage, ok } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { JobQueues } from '#libs/queue';
import { DriveService } from '#libs/suite';
import { AssetDto } from '../assets/assets.dto.js';
import { queueProcessing } from '../assets/upload.js';
import { assertLiveAccountWrite } from '../http/account-writes.js';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { Connection, Principal, type KeyPrincipal } from '../http/principal.js';
import { CreateFolderDto, ImportFileDto, ListFilesQueryDto, StorageFileDto, UploadFileDto } from './drive.dto.js';

const PROVIDER_ERRORS = ['PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR'] as const;

/** §4.5 the workspace-suite Drive rows (docs/suite.md): Drive v3 files, folders, uploads, imports into the media library. */
@ApiTags('drive')
@Controller('v1/integrations/workspace-suite/drive')
export class DriveController {
  constructor(private readonly drive: DriveService, private readonly assets: AssetsService, private readonly queues: JobQueues) {}

  @Get('files')
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'The files of a folder (the top level by default), folders first, by name (a cursor: nextPageToken)' })
  @ApiEnvelope(StorageFileDto, { isArray: true, paged: false })
  @ApiErrors('VALIDATION_FAILED', 'FILE_NOT_FOUND', ...PROVIDER_ERRORS)
  async list(@Connection() use: UsableConnection, @Query() q: ListFilesQueryDto) {
    const page = await this.drive.list(use, { folderId: q.folderId ?? null, search: q.search?.trim() || null, kind: q.kind ?? null, limit: q.limit ?? 50, pageToken: q.pageToken ?? null });
    return cursorPage(page.files, page.nextPageToken);
  }

  @Post('files')
  @Scopes('integrations:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Copy the file behind a public URL into storage (downloaded first, up to ASSET_MAX_BYTES; then one resumable upload)' })
  @ApiEnvelope(StorageFileDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'LIVE_MODE_REQUIRED', 'MEDIA_UNAVAILABLE', 'ASSET_TOO_LARGE', 'FILE_NOT_FOUND', ...PROVIDER_ERRORS)
  async upload(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: UploadFileDto) {
    assertLiveAccountWrite(p, 'workspace-suite');
    const file = await this.drive.upload(use, { url: body.url, name: body.name?.trim() ?? null, folderId: body.folderId ?? null, mimeType: body.mimeType?.toLowerCase() ?? null });
    return ok(file, `Uploaded ${file.id}`);
  }

  @Post('folders')
  @Scopes('integrations:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Create a folder' })
  @ApiEnvelope(StorageFileDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'LIVE_MODE_REQUIRED', 'FILE_NOT_FOUND', ...PROVIDER_ERRORS)
  async createFolder(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: CreateFolderDto) {
    assertLiveAccountWrite(p, 'workspace-suite');
    const folder = await this.drive.createFolder(use, { name: body.name.trim(), parentId: body.parentId ?? null });
    return ok(folder, `Created ${folder.id}`);
  }

  @Post('files/:fileId/import')
  @Scopes('assets:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Copy a storage file into the media library (the storage allowance applies). The asset is processing: it is ready shortly, see asset.ready' })
  @ApiEnvelope(AssetDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'FILE_NOT_FOUND', 'UNSUPPORTED_ASSET', 'ASSET_TOO_LARGE', 'LIMIT_STORAGE', 'NOT_READY', ...PROVIDER_ERRORS)
  async import(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Param('fileId') fileId: string, @Body() body: ImportFileDto) {
    const row = await this.drive.importFile(p.workspaceId, p.plan, use, fileId, { folder: body.folder ?? null, tags: body.tags ?? null }, p.mode);
    await queueProcessing(this.queues, this.assets, row);
    return ok(this.assets.view(row), `Imported as ${row.id}; it is being processed and is ready shortly`);
  }
}
