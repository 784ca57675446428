import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiQuery } from '@nestjs/swagger';
import { ASSET_SORTS, ASSET_STATUSES, ASSET_TYPES } from '#libs/assets';

export class AssetErrorDto {
  @ApiProperty({ example: 'ASSET_INVALID' }) code!: string;
  @ApiProperty({ example: 'The file is not a PNG picture: its data is cut short' }) message!: string;
}

/** §2 Asset, with the house fields of docs/assets.md. */
export class AssetDto {
  @ApiProperty({ example: 'ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: ASSET_TYPES }) type!: string;
  @ApiProperty({ enum: ['workspace', 'global'], description: 'global: the read-only stock library' }) scope!: string;
  @ApiProperty({ enum: ['live', 'test'], description: 'The mode it was uploaded in (a test key\'s or a test-mode session\'s: test); a test caller deletes only test assets' }) mode!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty({ description: 'Where the file is downloaded from (an SVG: once it is ready, sanitised)' }) url!: string;
  @ApiProperty({ example: 'image/png' }) mimeType!: string;
  @ApiProperty() sizeBytes!: number;
  @ApiProperty({ nullable: true, type: Number }) width!: number | null;
  @ApiProperty({ nullable: true, type: Number }) height!: number | null;
  @ApiProperty({ nullable: true, type: Number }) durationSec!: number | null;
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty({ nullable: true, type: String }) folder!: string | null;
  @ApiProperty({ enum: ASSET_STATUSES, description: 'uploading → processing → ready | failed; only ready assets render' }) status!: string;
  @ApiProperty({ nullable: true, type: AssetErrorDto, description: 'Why it failed' }) error!: AssetErrorDto | null;
  @ApiProperty({ nullable: true, type: String, description: 'Images and videos, once ready' }) thumbnailUrl!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Audio, once ready: a picture of its waveform' }) waveformUrl!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Fonts: the family to name in text assets and timeline.fonts' }) fontFamily!: string | null;
  @ApiProperty({ required: false, description: 'Lottie: frames' }) frames?: number;
  @ApiProperty({ required: false, description: 'Lottie: frames per second' }) fps?: number;
  @ApiProperty({ required: false, nullable: true, type: String, description: 'Stock items: where the file comes from' }) source?: string | null;
  @ApiProperty({ required: false, nullable: true, type: String, description: 'Stock items: SPDX licence id' }) licence?: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

export class UploadedAssetDto {
  @ApiProperty({ example: 'ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty() url!: string;
}

/** §4.4 upload body (multipart/form-data), for the OpenAPI document. */
export class UploadAssetDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file; its type is read from its bytes' }) file!: unknown;
  @ApiProperty({ required: false, description: 'Comma-separated, up to 20' }) tags?: string;
  @ApiProperty({ required: false, maxLength: 2000 }) description?: string;
  @ApiProperty({ required: false, maxLength: 128 }) folder?: string;
}

/** §4.4 list query, documented. */
export function AssetListQuery() {
  return applyDecorators(
    ApiQuery({ name: 'scope', required: false, enum: ['workspace', 'global', 'all'], description: 'workspace (default): own assets; global: the stock library; all: both' }),
    ApiQuery({ name: 'type', required: false, description: `Comma-separated: ${ASSET_TYPES.join(', ')}` }),
    ApiQuery({ name: 'status', required: false, description: `Comma-separated: ${ASSET_STATUSES.join(', ')}` }),
    ApiQuery({ name: 'folder', required: false, description: 'Comma-separated folder names (any of them)' }),
    ApiQuery({ name: 'tags', required: false, description: 'Comma-separated tags: an asset must carry all of them' }),
    ApiQuery({ name: 'search', required: false, description: 'Case-insensitive over name, description and tags; up to 128 characters' }),
    ApiQuery({ name: 'sort', required: false, enum: ASSET_SORTS, description: 'Default createdAt' }),
    ApiQuery({ name: 'order', required: false, enum: ['asc', 'desc'], description: 'Default desc for dates and sizes, asc for name and type' }),
    ApiQuery({ name: 'page', required: false, type: Number }),
    ApiQuery({ name: 'limit', required: false, type: Number, description: '1 to 100, default 24' }),
  );
}
