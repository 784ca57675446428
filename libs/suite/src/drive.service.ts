import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assetName, tidyUploadFields, type Asset, type AssetsService } from '#libs/assets';
import { ApiError, validationFailed, type KeyMode } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { ProviderError, type UsableConnection } from '#libs/integrations';
import { ACCEPTED_ASSET_FORMATS, ASSET_HEAD_BYTES, detectAssetType, downloadToFile, FileTooLarge, MediaFetchError, readHead } from '#libs/media';
import type { StorageDriver } from '#libs/storage';
import { DRIVE_BASE_URL, garbled, googleCall, GoogleSession, suiteFailure, type GoogleDeps, type GoogleRequest, type GoogleTokens } from './google.js';
import { driveLiteral } from './sheets.service.js';

export const FOLDER_MIME = 'application/vnd.google-apps.folder';
/** `kind` of List storage files (§4.5): a family of MIME types, or `folder`. */
export const DRIVE_KINDS = ['image', 'video', 'audio', 'font', 'folder'] as const;
export type DriveKind = (typeof DRIVE_KINDS)[number];
/** A full MIME type as `kind` (type/subtype, RFC 6838 characters). */
export const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;
const FILE_FIELDS = 'id,name,mimeType,size,webViewLink';
/** A file's transfer (download from the URL, upload to Drive, download from Drive) may take this long. */
const TRANSFER_MS = 10 * 60_000;

/** §2 Storage file. */
export interface StorageFile {
  id: string;
  name: string;
  mimeType: string;
  sizeBytes: number | null;
  isFolder: boolean;
  webViewUrl: string | null;
}

export interface ListFiles {
  folderId: string | null;
  search: string | null;
  kind: string | null;
  limit: number;
  pageToken: string | null;
}

export interface UploadFromUrl {
  url: string;
  name: string | null;
  folderId: string | null;
  mimeType: string | null;
}

interface DriveFile {
  id?: string;
  name?: string;
  mimeType?: string;
  size?: string;
  webViewLink?: string;
}

export interface DriveDeps extends GoogleDeps {
  tokens: GoogleTokens;
  assets: AssetsService;
  storage: StorageDriver;
  config: GoogleDeps['config'] & { assets: { maxBytes: number } };
}

/** The Drive `q` clause of a `kind` (a family, `folder`, or one MIME type). */
function kindClause(kind: string): string {
  if (kind === 'folder') return `mimeType = ${driveLiteral(FOLDER_MIME)}`;
  if (kind === 'font') return "(mimeType contains 'font/' or mimeType contains 'application/x-font' or mimeType = 'application/vnd.ms-opentype' or mimeType = 'application/font-woff')";
  if (kind === 'image' || kind === 'video' || kind === 'audio') return `mimeType contains '${kind}/'`;
  return `mimeType = ${driveLiteral(kind.toLowerCase())}`;
}

function storageFile(f: DriveFile): StorageFile {
  if (!f.id) throw garbled('a file without its id');
  const size = f.size === undefined ? NaN : Number(f.size);
  return {
    id: f.id, name: f.name ?? '', mimeType: f.mimeType ?? 'application/octet-stream',
    sizeBytes: Number.isSafeInteger(size) ? size : null, isFolder: f.mimeType === FOLDER_MIME, webViewUrl: f.webViewLink ?? null,
  };
}

/** Drive's file ids are letters, digits, `-` and `_`: anything else is no file (asked of no one). */
function checkId(id: string, field = 'fileId'): void {
  if (!/^[\w-]{1,200}$/.test(id)) throw new ApiError('FILE_NOT_FOUND', `No storage file has this ${field}`);
}

/** The file name a URL suggests: its last path segment, decoded; `download` when it has none. */
export function nameFromUrl(url: string): string {
  let segment = '';
  try {
    segment = new URL(url).pathname.split('/').filter(Boolean).pop() ?? '';
    segment = decodeURIComponent(segment);
  } catch { /* the raw segment stays */ }
  return assetName(segment, 'download');
}

/**
 * The Drive rows of workspace-suite (§4.5; docs/suite.md): Drive v3 `files.list`, `files.create`
 * (folders; resumable uploads of a URL's file), `files.get` and `alt=media` into the media library.
 * A file is first downloaded into a temporary file (streamed, capped at ASSET_MAX_BYTES), so an
 * oversized or failed source never reaches Drive or our storage.
 */
export class DriveService {
  constructor(private readonly deps: DriveDeps) {}

  async list(use: UsableConnection, q: ListFiles): Promise<{ files: StorageFile[]; nextPageToken: string | null }> {
    if (q.folderId) checkId(q.folderId, 'folderId');
    const clauses = [`${driveLiteral(q.folderId ?? 'root')} in parents`, 'trashed = false'];
    if (q.search) clauses.push(`name contains ${driveLiteral(q.search)}`);
    if (q.kind) clauses.push(kindClause(q.kind));
    const query = new URLSearchParams({
      q: clauses.join(' and '), pageSize: String(q.limit), orderBy: 'folder,name', fields: `nextPageToken,files(${FILE_FIELDS})`,
      supportsAllDrives: 'true', includeItemsFromAllDrives: 'true', ...(q.pageToken ? { pageToken: q.pageToken } : {}),
    });
    const answer = await this.call<{ files?: DriveFile[]; nextPageToken?: unknown }>(use, { api: 'drive', path: '/drive/v3/files', query, retry: 'all' }, (err) => this.rejected(err, 'query.pageToken', q.folderId));
    if (!Array.isArray(answer.files)) throw garbled('the file list without files');
    return { files: answer.files.map(storageFile), nextPageToken: typeof answer.nextPageToken === 'string' && answer.nextPageToken ? answer.nextPageToken : null };
  }

  /** `files.create` of a folder; retried only after 429 (a retried create could make two). */
  async createFolder(use: UsableConnection, input: { name: string; parentId: string | null }): Promise<StorageFile> {
    if (input.parentId) checkId(input.parentId, 'parentId');
    const answer = await this.call<DriveFile>(use, {
      api: 'drive', method: 'POST', path: '/drive/v3/files', query: new URLSearchParams({ fields: FILE_FIELDS, supportsAllDrives: 'true' }),
      json: { name: input.name, mimeType: FOLDER_MIME, ...(input.parentId ? { parents: [input.parentId] } : {}) }, retry: 'refused',
    }, (err) => this.rejected(err, 'name', input.parentId));
    return storageFile(answer);
  }

  /**
   * A public URL's file into Drive: downloaded first (SSRF-checked per redirect hop, streamed to a
   * temporary file, stopped at ASSET_MAX_BYTES: 413, Drive never asked), then one resumable upload
   * (`uploadType=resumable`: the session, then one PUT of the bytes). A failed PUT cancels the
   * session (DELETE), so Drive holds the whole file or nothing.
   */
  async upload(use: UsableConnection, input: UploadFromUrl): Promise<StorageFile> {
    if (input.folderId) checkId(input.folderId, 'folderId');
    return this.withTemp(async (path) => {
      const { maxBytes } = this.deps.config.assets;
      let got;
      try {
        got = await downloadToFile(input.url, path, { policy: this.deps.config.env, lookup: this.deps.lookup, limits: { maxBytes, timeoutMs: TRANSFER_MS } });
      } catch (err) {
        throw sourceFailure(err, maxBytes);
      }
      if (got.sizeBytes === 0) throw new ApiError('MEDIA_UNAVAILABLE', 'url answered an empty file; nothing was uploaded');
      const mimeType = input.mimeType ?? got.contentType ?? 'application/octet-stream';
      const session = new GoogleSession(this.deps.tokens, use, this.deps);
      const onRejected = (err: ProviderError) => this.rejected(err, 'name', input.folderId);
      let location: string | null = null;
      try {
        const started = await session.send({
          api: 'drive', method: 'POST', path: '/upload/drive/v3/files', query: new URLSearchParams({ uploadType: 'resumable', fields: FILE_FIELDS, supportsAllDrives: 'true' }),
          headers: { 'x-upload-content-type': mimeType, 'x-upload-content-length': String(got.sizeBytes) },
          json: { name: input.name ?? nameFromUrl(input.url), mimeType, ...(input.folderId ? { parents: [input.folderId] } : {}) }, retry: 'all',
        });
        location = this.sessionPath(session.connection, started.headers.location);
        const [pathname, search] = location.split('?') as [string, string | undefined];
        const file = await session.json<DriveFile>({
          api: 'drive', method: 'PUT', path: pathname, query: new URLSearchParams(search ?? ''), headers: { 'content-type': mimeType },
          body: { path, size: got.sizeBytes }, long: true, budgetMs: TRANSFER_MS, retry: 'refused',
        });
        return storageFile(file);
      } catch (err) {
        if (location) await this.cancel(session, location);
        return suiteFailure(err, session.connection, this.deps.integrations, onRejected);
      }
    });
  }

  /**
   * A Drive file into the media library (§4.4's rules): `files.get` (unknown → 404 FILE_NOT_FOUND;
   * a Google-native document or a folder → 422; over ASSET_MAX_BYTES → 413), `alt=media` streamed
   * to a temporary file (402 LIMIT_STORAGE first when the announced size cannot fit), typed by its
   * bytes (422 UNSUPPORTED_ASSET), the storage allowance reserved (402 LIMIT_STORAGE), stored. Answers the record, `processing`; the caller queues its processing.
   */
  async importFile(workspaceId: string, plan: Plan, use: UsableConnection, fileId: string, input: { folder: string | null; tags: string | null }, mode: KeyMode): Promise<Asset> {
    checkId(fileId);
    const { fields, errors } = tidyUploadFields({ ...(input.folder !== null ? { folder: input.folder } : {}), ...(input.tags !== null ? { tags: input.tags } : {}) });
    if (Object.keys(errors).length) throw validationFailed(errors, 'The import\'s fields are not valid');
    const { assets, storage, config } = this.deps;
    const maxBytes = config.assets.maxBytes;
    const onRejected = (err: ProviderError) => this.rejected(err, 'fileId', fileId);
    const path = `/drive/v3/files/${encodeURIComponent(fileId)}`;
    const meta = storageFile(await this.call<DriveFile>(use, {
      api: 'drive', path, query: new URLSearchParams({ fields: FILE_FIELDS, supportsAllDrives: 'true' }), retry: 'all',
    }, onRejected));
    if (meta.mimeType.startsWith('application/vnd.google-apps.')) {
      throw new ApiError('UNSUPPORTED_ASSET', `${meta.isFolder ? 'A folder' : `A Google-native document (${meta.mimeType})`} cannot be downloaded as a file; export it to a file in Drive first`, {
        errors: { fileId: ['Not a downloadable file'] },
      });
    }
    if (meta.sizeBytes !== null && meta.sizeBytes > maxBytes) throw tooLarge(maxBytes);
    if (meta.sizeBytes !== null) await assets.assertRoom(workspaceId, plan, meta.sizeBytes);
    return this.withTemp(async (tmp) => {
      const session = new GoogleSession(this.deps.tokens, use, this.deps);
      let saved;
      try {
        saved = await session.send({
          api: 'drive', path, query: new URLSearchParams({ alt: 'media', supportsAllDrives: 'true' }), saveTo: tmp, maxResponseBytes: maxBytes, long: true, budgetMs: TRANSFER_MS, retry: 'all',
        });
      } catch (err) {
        // Over the cap although files.get said otherwise: stopped there.
        if (err instanceof ProviderError && err.status !== null && err.status < 300) throw tooLarge(maxBytes);
        return suiteFailure(err, session.connection, this.deps.integrations, onRejected);
      }
      const size = saved.savedBytes ?? 0;
      const head = await readHead(tmp, ASSET_HEAD_BYTES);
      const detected = head.length ? detectAssetType(head) : null;
      if (!detected) {
        throw new ApiError('UNSUPPORTED_ASSET', `${meta.name} is not a type the media library takes (its type is read from its bytes). Accepted: ${ACCEPTED_ASSET_FORMATS}`, {
          errors: { fileId: [`Not an accepted type. Accepted: ${ACCEPTED_ASSET_FORMATS}`] },
        });
      }
      const row = await assets.reserve(workspaceId, plan, { mode, name: assetName(meta.name, `drive.${detected.ext}`), type: detected.type, mimeType: detected.mimeType, ext: detected.ext, reserveBytes: size });
      try {
        const put = await storage.put(row.uploadKey ?? row.fileKey, createReadStream(tmp));
        return await assets.stored(row, put.sizeBytes, fields);
      } catch (err) {
        await assets.discard(row);
        throw err;
      }
    });
  }

  /** The account a connection acts as (Drive `about.get`, in the drive scope it has): shown beside the connection. */
  async about(use: UsableConnection): Promise<{ email: string | null; name: string | null }> {
    const answer = await this.call<{ user?: { emailAddress?: unknown; displayName?: unknown } }>(
      use, { api: 'drive', path: '/drive/v3/about', query: new URLSearchParams({ fields: 'user(emailAddress,displayName)' }), retry: 'all' }, (err) => new ApiError('PROVIDER_ERROR', err.message),
    );
    const text = (v: unknown, max: number) => (typeof v === 'string' && v ? v.slice(0, max) : null);
    return { email: text(answer.user?.emailAddress, 320), name: text(answer.user?.displayName, 200) };
  }

  private call<T>(use: UsableConnection, req: GoogleRequest, onRejected: (err: ProviderError) => ApiError): Promise<T> {
    return googleCall<T>(this.deps, use, req, onRejected);
  }

  /** The resumable session URI (Location) as a path under the connection's Drive base: another origin is not followed. */
  private sessionPath(use: UsableConnection, location: unknown): string {
    const base = (use.connection.baseUrl ?? DRIVE_BASE_URL).replace(/\/+$/, '');
    if (typeof location !== 'string' || !location.startsWith(`${base}/`)) throw garbled('a resumable upload session without a Location under its own host');
    return location.slice(base.length);
  }

  /** Cancels a resumable session (Google answers 499); best effort: an abandoned session expires unfinished anyway. */
  private async cancel(session: GoogleSession, location: string): Promise<void> {
    const [pathname, search] = location.split('?') as [string, string | undefined];
    await session.send({ api: 'drive', method: 'DELETE', path: pathname, query: new URLSearchParams(search ?? ''), retry: 'refused' }).catch(() => undefined);
  }

  private async withTemp<T>(work: (path: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(join(tmpdir(), 'mr-drive-'));
    try {
      return await work(join(dir, 'file'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Google refused the request itself: an unknown or unshared file (404/403) or a bad value (400 → 422). */
  private rejected(err: ProviderError, field: string, fileId?: string | null): ApiError {
    if (fileId && (err.status === 404 || err.status === 403)) return new ApiError('FILE_NOT_FOUND', `No storage file ${fileId} that the connected account can open (${err.message})`);
    if (err.status === 400) return validationFailed({ [field]: [err.message] }, 'The file storage provider refused the request');
    return new ApiError('PROVIDER_ERROR', err.message);
  }
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('ASSET_TOO_LARGE', `The file is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB, the largest file this deployment takes (ASSET_MAX_BYTES); nothing was stored`, { data: { maxBytes } });
}

/** Why the file behind `url` could not be read: refused (SSRF) → 422 `url`; too large → 413; unreachable → 422 MEDIA_UNAVAILABLE. */
function sourceFailure(err: unknown, maxBytes: number): unknown {
  if (err instanceof FileTooLarge) return tooLarge(maxBytes);
  if (err instanceof MediaFetchError) {
    if (err.message.startsWith('Refused: ')) return validationFailed({ url: [err.message.slice('Refused: '.length)] }, 'url cannot be fetched');
    return new ApiError('MEDIA_UNAVAILABLE', `url could not be read: ${err.message}; nothing was uploaded`);
  }
  return err;
}

