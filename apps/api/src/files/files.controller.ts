import { applyDecorators, Controller, createParamDecorator, Get, Head, Headers, Inject, Query, Res, type ExecutionContext } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '#libs/core';
import type { StorageDriver } from '#libs/storage';
import { ApiErrors, Public } from '../http/decorators.js';
import { fileNotFound, sendStoredFile } from './file-response.js';
import { APP_CONFIG, STORAGE } from '#libs/app';

const binary = { schema: { type: 'string', format: 'binary' } };

/** The key: what the `*` of the route matched (documented as the `path` parameter of `/files/{path}`). */
const FileKey = createParamDecorator((_: unknown, ctx: ExecutionContext) => (ctx.switchToHttp().getRequest<FastifyRequest>().params as Record<string, string>)['*']);

/** The OpenAPI description shared by GET and HEAD. */
function FileDocs(summary: string, body: boolean) {
  const content = body ? { content: { '*/*': binary } } : {};
  return applyDecorators(
    Public(),
    ApiOperation({
      summary,
      description:
        'A stored render output or library file. The unguessable key is the capability: no API key. ' +
        'Served at the root of the host, outside the API prefix. Single byte ranges (`bytes=a-b`, `bytes=a-`, `bytes=-n`), ' +
        'If-None-Match / If-Modified-Since and If-Range are honoured; files never change (Cache-Control immutable). ' +
        'With the S3 storage driver files are downloaded from the bucket (presigned URLs, or the configured public base URL) ' +
        'and this route answers 404.',
      servers: [{ url: '/', description: 'Host root (outside the API prefix)' }],
    }),
    ApiParam({ name: 'path', type: String, description: 'The file key, e.g. `r/rnd_…/<random>.png`', example: 'r/rnd_01JD0000000000000000000000/abc.png' }),
    ApiQuery({ name: 'download', required: false, enum: ['1'], description: '`1`: Content-Disposition: attachment' }),
    ApiResponse({ status: 200, description: 'The whole file', ...content }),
    ApiResponse({ status: 206, description: 'The requested byte range (Content-Range)', ...content }),
    ApiResponse({ status: 304, description: 'Not modified (If-None-Match / If-Modified-Since)' }),
    ApiResponse({ status: 416, description: 'Range not satisfiable (Content-Range: bytes */size), empty body' }),
    ApiErrors('NOT_FOUND'),
  );
}

@ApiTags('files')
@Controller('files')
export class FilesController {
  /** Only the local driver's files come through the API; a bucket's are fetched from the bucket, never proxied. */
  private readonly served: boolean;

  constructor(
    @Inject(STORAGE) private readonly storage: StorageDriver,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.served = config.storage.driver === 'local';
  }

  // HEAD is declared before GET: Fastify then adds no HEAD route of its own, which would read the whole file.
  @Head('*')
  @FileDocs('Headers of a stored file', false)
  head(@FileKey() key: string, @Query('download') download: string | undefined, @Headers() headers: IncomingHttpHeaders, @Res() reply: FastifyReply) {
    return this.send(key, headers, reply, { body: false, download: download === '1' });
  }

  @Get('*')
  @FileDocs('Download a stored file', true)
  get(@FileKey() key: string, @Query('download') download: string | undefined, @Headers() headers: IncomingHttpHeaders, @Res() reply: FastifyReply) {
    return this.send(key, headers, reply, { body: true, download: download === '1' });
  }

  private async send(key: string, headers: IncomingHttpHeaders, reply: FastifyReply, opts: { body: boolean; download: boolean }): Promise<void> {
    if (!this.served) throw fileNotFound();
    await sendStoredFile(this.storage, key, headers, reply, opts);
  }
}
