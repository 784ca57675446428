import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, IsUrl, Matches, Max, MaxLength, Min } from 'class-validator';
import { DRIVE_KINDS, MIME_TYPE } from '#libs/suite';
import { MayOmit, Satisfies } from '../http/validation.js';

// The Drive rows of §4.5 and the §2 Storage file shape; docs/suite.md.

const notBlank = (v: unknown) => typeof v === 'string' && v.trim().length > 0;
const DRIVE_ID = /^[\w-]{1,200}$/;
const isKind = (v: unknown) => typeof v === 'string' && ((DRIVE_KINDS as readonly string[]).includes(v) || MIME_TYPE.test(v));

/** §4.5 List storage files (query). */
export class ListFilesQueryDto {
  @ApiPropertyOptional({ description: 'A folder\'s id; omit for the top level (My Drive)' })
  @MayOmit() @IsString() @Matches(DRIVE_ID, { message: 'folderId must be a Drive file id' }) folderId?: string;

  @ApiPropertyOptional({ maxLength: 128, description: 'Substring of the name (case-insensitive)' })
  @MayOmit() @IsString() @MaxLength(128) search?: string;

  @ApiPropertyOptional({ description: `${DRIVE_KINDS.join(', ')}, or a full MIME type (image/png)`, example: 'image' })
  @MayOmit() @IsString() @Satisfies('driveKind', isKind, `kind must be one of ${DRIVE_KINDS.join(', ')} or a MIME type such as image/png`) kind?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;

  @ApiPropertyOptional({ description: 'nextPageToken of the previous page' })
  @MayOmit() @IsString() @MaxLength(1024) @Matches(/^[\x21-\x7e]+$/, { message: 'pageToken must be a nextPageToken of a previous page' }) pageToken?: string;
}

/** §4.5 Upload to storage (body). */
export class UploadFileDto {
  @ApiProperty({ maxLength: 2048, description: 'A public http(s) URL (https only in production); its file is copied into storage', example: 'https://example.com/media/intro.mp4' })
  @IsString() @MaxLength(2048) @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: 'url must be an absolute http(s) URL' }) url!: string;

  @ApiPropertyOptional({ maxLength: 255, description: 'Default: the URL\'s last path segment' })
  @MayOmit() @IsString() @MaxLength(255) @Satisfies('notBlank', notBlank, 'name must not be empty') name?: string;

  @ApiPropertyOptional({ description: 'A folder\'s id; omit for the top level' })
  @MayOmit() @IsString() @Matches(DRIVE_ID, { message: 'folderId must be a Drive file id' }) folderId?: string;

  @ApiPropertyOptional({ description: 'Overrides the type the source reports', example: 'video/mp4' })
  @MayOmit() @IsString() @Matches(MIME_TYPE, { message: 'mimeType must be a MIME type such as video/mp4' }) mimeType?: string;
}

/** §4.5 Create folder (body). */
export class CreateFolderDto {
  @ApiProperty({ maxLength: 255, example: 'Campaign renders' })
  @IsString() @MaxLength(255) @Satisfies('notBlank', notBlank, 'name must not be empty') name!: string;

  @ApiPropertyOptional({ description: 'The parent folder\'s id; omit for the top level' })
  @MayOmit() @IsString() @Matches(DRIVE_ID, { message: 'parentId must be a Drive file id' }) parentId?: string;
}

/** §4.5 Import file (body). */
export class ImportFileDto {
  @ApiPropertyOptional({ maxLength: 128, description: 'The media library folder' })
  @MayOmit() @IsString() @MaxLength(128) folder?: string;

  @ApiPropertyOptional({ description: 'Comma-separated tags (at most 20, each up to 50 characters)', example: 'drive,intro' })
  @MayOmit() @IsString() @MaxLength(2000) tags?: string;
}

/** §2 Storage file. */
export class StorageFileDto {
  @ApiProperty({ example: '1A2b3C4d5E6f7G8h9I0j' }) id!: string;
  @ApiProperty({ example: 'intro.mp4' }) name!: string;
  @ApiProperty({ example: 'video/mp4' }) mimeType!: string;
  @ApiProperty({ nullable: true, type: Number, description: 'null for folders and Google-native documents' }) sizeBytes!: number | null;
  @ApiProperty() isFolder!: boolean;
  @ApiProperty({ nullable: true, type: String, example: 'https://drive.google.com/file/d/1A2b3C4d5E6f7G8h9I0j/view' }) webViewUrl!: string | null;
}
