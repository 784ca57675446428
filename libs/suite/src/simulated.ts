import { randomBytes } from 'node:crypto';
import { ApiError } from '#libs/core';
import { formatA1, parseA1 } from './a1.js';
import { nameFromUrl, type ListFiles, type StorageFile } from './drive.service.js';
import type { Cell, WriteResult } from './sheets.js';

/** What a workflow's steps write into the workspace-suite account: Sheets values and Drive uploads (and the look-up of an upload begun before). */
export interface SuiteWrites {
  write(spreadsheetId: string, input: { range: string; values: Cell[][] }): Promise<WriteResult>;
  upload(input: { url: string; name: string | null; folderId: string | null }): Promise<StorageFile>;
  list(q: ListFiles): Promise<{ files: StorageFile[] }>;
}

const MIME_BY_EXT: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', mp4: 'video/mp4', pdf: 'application/pdf' };

/**
 * The workspace-suite writes of test mode (issue 28, docs/decisions.md "Test mode (issue 28):
 * providers, messaging, workflows"): chosen where the Google-speaking services are (the workflow
 * runner's `suite`), it makes the checks the services make before calling Google (the ids'
 * alphabet, the A1 range) and answers in their shapes (the range written, a Drive-shaped file id),
 * calling nobody. Nothing is written, so a look-up finds nothing.
 */
export class SimulatedSuiteWrites implements SuiteWrites {
  write(spreadsheetId: string, input: { range: string; values: Cell[][] }): Promise<WriteResult> {
    if (!/^[\w-]{1,200}$/.test(spreadsheetId)) throw new ApiError('SPREADSHEET_NOT_FOUND', 'No spreadsheet has this id');
    const range = parseA1(input.range);
    const rows = input.values.length;
    const columns = Math.max(0, ...input.values.map((r) => r.length));
    return Promise.resolve({ spreadsheetId, updatedRange: formatA1(range), updatedRows: rows, updatedColumns: columns, updatedCells: input.values.reduce((n, r) => n + r.length, 0) });
  }

  upload(input: { url: string; name: string | null; folderId: string | null }): Promise<StorageFile> {
    if (input.folderId && !/^[\w-]{1,200}$/.test(input.folderId)) throw new ApiError('FILE_NOT_FOUND', 'No storage file has this folderId');
    const name = input.name ?? nameFromUrl(input.url);
    const ext = /\.([a-z0-9]{2,4})$/i.exec(name)?.[1]?.toLowerCase() ?? '';
    const id = `1${randomBytes(24).toString('base64url')}`.slice(0, 33);
    return Promise.resolve({ id, name, mimeType: MIME_BY_EXT[ext] ?? 'application/octet-stream', sizeBytes: null, isFolder: false, webViewUrl: `https://drive.google.com/file/d/${id}/view` });
  }

  list(): Promise<{ files: StorageFile[] }> {
    return Promise.resolve({ files: [] });
  }
}
