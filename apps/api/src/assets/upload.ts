import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { assetName, tidyUploadFields, UPLOAD_FIELDS, type Asset, type AssetsService } from '#libs/assets';
import { ApiError, dependencyUnavailable, validationFailed, type AppConfig, type FieldErrors, type KeyMode } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { scavenger } from '#libs/outbound';
import { ACCEPTED_ASSET_FORMATS, ASSET_HEAD_BYTES, detectAssetType } from '#libs/media';
import type { JobQueues } from '#libs/queue';
import type { StorageDriver } from '#libs/storage';

/** Multipart framing and the text fields around a file: what a request may hold beyond the file's bytes. */
const FRAMING_ALLOWANCE = 64 * 1024;

/** How often an upload's dead socket buffers are collected (libs/outbound scavenge.ts). */
const SCAVENGE_EVERY_BYTES = 16 * 1024 * 1024;

/** The leading bytes of a stream (up to `n`), and a stream of all of its bytes (those first). */
async function peek(stream: Readable, n: number): Promise<{ head: Buffer; all: Readable }> {
  const it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < n) {
    const next = await it.next();
    if (next.done) {
      done = true;
      break;
    }
    chunks.push(next.value);
    size += next.value.length;
  }
  const head = Buffer.concat(chunks);
  const passed = scavenger(SCAVENGE_EVERY_BYTES);
  async function* rest(): AsyncGenerator<Buffer> {
    yield head;
    if (done) return;
    for (let next = await it.next(); !next.done; next = await it.next()) {
      passed(next.value.length);
      yield next.value;
    }
  }
  return { head, all: Readable.from(rest(), { objectMode: false }) };
}

function tooLarge(max: number): ApiError {
  return new ApiError('ASSET_TOO_LARGE', `The file is larger than ${Math.floor(max / (1024 * 1024))} MB, the largest upload this deployment takes (ASSET_MAX_BYTES); nothing was stored`, {
    data: { maxBytes: max },
  });
}

function badRequest(message: string): ApiError {
  return new ApiError('INVALID_REQUEST', message);
}

/** @fastify/multipart's refusals, as the contract's codes. */
function multipartError(err: unknown, max: number): ApiError | undefined {
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(max);
  if (code === 'FST_FILES_LIMIT') return badRequest('Send one file per upload, in the part named "file"');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return badRequest(`An upload holds one "file" part and the text fields ${UPLOAD_FIELDS.join(', ')}`);
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return badRequest('The body must be multipart/form-data with a "file" part');
  if (code === 'FST_PROTO_VIOLATION') return badRequest('A field name of the form is not allowed');
  if (err instanceof Error && /Unexpected end of (form|multipart)|Malformed part header|Multipart: Boundary not found/i.test(err.message)) {
    return badRequest('The multipart body is malformed or cut short');
  }
  return undefined;
}

/**
 * §4.4 upload: a multipart body streamed part by part. The file's leading bytes give its type (422
 * UNSUPPORTED_ASSET naming the accepted ones when they match none, before anything is stored); the
 * storage allowance is reserved (402 LIMIT_STORAGE); then the bytes stream into storage as they
 * arrive, never held whole in memory or on disk here. Any refusal after that removes the record and
 * what was stored. Answers the record, `processing`; the caller queues its processing.
 */
export async function receiveUpload(req: FastifyRequest, ctx: { workspaceId: string; mode: KeyMode; plan: Plan; assets: AssetsService; storage: StorageDriver; config: AppConfig }): Promise<Asset> {
  if (!req.isMultipart()) throw badRequest('An upload is multipart/form-data with the file in a part named "file" (and optional tags, description, folder)');
  const max = ctx.config.assets.maxBytes;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max + FRAMING_ALLOWANCE) throw tooLarge(max);

  const fields: Partial<Record<(typeof UPLOAD_FIELDS)[number], string>> = {};
  const unknown: FieldErrors = {};
  let row: Asset | undefined;
  let stored = 0;
  let files = 0;
  try {
    const parts = req.parts({ limits: { fileSize: max, files: 1, fields: 8, fieldSize: 16 * 1024, parts: 12, headerPairs: 50 } });
    for await (const part of parts as AsyncIterable<Multipart>) {
      if (part.type === 'field') {
        const name = part.fieldname;
        if (!(UPLOAD_FIELDS as readonly string[]).includes(name)) (unknown[name] ??= []).push(`Unknown field; an upload takes file, ${UPLOAD_FIELDS.join(', ')}`);
        else if (fields[name as (typeof UPLOAD_FIELDS)[number]] !== undefined) (unknown[name] ??= []).push('Given more than once');
        else if (part.valueTruncated) (unknown[name] ??= []).push('Too long');
        else fields[name as (typeof UPLOAD_FIELDS)[number]] = String(part.value);
        continue;
      }
      files++;
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw badRequest(`The file goes in a part named "file" (got "${part.fieldname.slice(0, 64)}")`);
      }
      const { head, all } = await peek(part.file, ASSET_HEAD_BYTES);
      if (head.length === 0) throw badRequest('The file is empty');
      const detected = detectAssetType(head);
      if (!detected) {
        part.file.resume();
        throw new ApiError('UNSUPPORTED_ASSET', `The file is not a type the media library takes (its type is read from its bytes). Accepted: ${ACCEPTED_ASSET_FORMATS}`, {
          errors: { file: [`Not an accepted type. Accepted: ${ACCEPTED_ASSET_FORMATS}`] },
        });
      }
      const reserveBytes = Number.isFinite(declared) && declared > 0 ? Math.min(declared, max) : max;
      row = await ctx.assets.reserve(ctx.workspaceId, ctx.plan, {
        mode: ctx.mode, name: assetName(part.filename, `upload.${detected.ext}`), type: detected.type, mimeType: detected.mimeType, ext: detected.ext, reserveBytes,
      });
      const put = await ctx.storage.put(row.uploadKey ?? row.fileKey, all);
      if (part.file.truncated) throw tooLarge(max);
      stored = put.sizeBytes;
    }
    if (files === 0 || !row) throw badRequest('The upload has no file: send it in a part named "file"');
    const { fields: tidy, errors } = tidyUploadFields(fields);
    const problems = { ...unknown, ...errors };
    if (Object.keys(problems).length) throw validationFailed(problems, 'The upload\'s fields are not valid');
    return await ctx.assets.stored(row, stored, tidy);
  } catch (err) {
    if (row) await ctx.assets.discard(row);
    throw multipartError(err, max) ?? err;
  }
}

/**
 * Queues a stored asset's processing (`asset.process`: type, duration, thumbnail or waveform, then
 * `ready`). No queue, no processing: the asset and its bytes go rather than stay `processing`
 * (503 DEPENDENCY_UNAVAILABLE naming Redis, nothing stored).
 */
export async function queueProcessing(queues: JobQueues, assets: AssetsService, row: Asset): Promise<void> {
  try {
    await queues.add('asset.process', { assetId: row.id }, { jobId: row.id });
  } catch {
    await assets.discard(row);
    throw dependencyUnavailable('redis');
  }
}
