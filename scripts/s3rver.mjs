// The tests' S3-compatible server: s3rver (a devDependency) on a free loopback port, its buckets
// under <dir>/data. Writes <dir>/pid, then <dir>/port once it listens (scripts/services.sh start_s3).
// Credentials: s3rver's own S3RVER / S3RVER. Prints nothing but errors.
//
// What real S3 (and MinIO) do and s3rver 3.7 does not, added here so the tests mean what they say:
// - it checks the access key and the expiry of a presigned URL but not its SigV4 signature (its
//   source: "Signature version 4 calculation is unimplemented"): a query-signed request is checked
//   here with the AWS SDK's own signer (@smithy/signature-v4), so a tampered URL gets 403;
// - it has no AbortMultipartUpload: DELETE ?uploadId= removes the upload's parts;
// - it reads `Range: bytes=0-0` as the whole object (`end || Infinity`): one byte is served.
// Its list continuation tokens need DES: run it with --openssl-legacy-provider (services.sh does).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import S3rver from 's3rver';
import { SignatureV4 } from '@smithy/signature-v4';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/s3rver.mjs <dir>');
  process.exit(2);
}
const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER';
const data = join(dir, 'data');
mkdirSync(data, { recursive: true });
writeFileSync(join(dir, 'pid'), String(process.pid));

/** The hash the SDK's signer takes: HMAC-SHA256 when given a secret, else SHA-256. */
class Sha256 {
  constructor(secret) {
    this.hash = secret ? createHmac('sha256', secret) : createHash('sha256');
  }
  update(chunk) {
    this.hash.update(chunk);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

const xmlError = (ctx, status, code, message) => {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
};

/** Recomputes a presigned request's signature with the SDK's signer, from what arrived on the wire. */
async function expectedSignature(req) {
  const url = new URL(req.url, `http://${req.headers.host}`);
  const params = url.searchParams;
  const [accessKeyId, day, region, service] = (params.get('X-Amz-Credential') ?? '').split('/');
  if (accessKeyId !== ACCESS_KEY) return undefined; // s3rver answers InvalidAccessKeyId
  const stamp = params.get('X-Amz-Date') ?? '';
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
  if (!m || stamp.slice(0, 8) !== day) return null;
  const query = {};
  for (const [name, value] of params) if (!/^X-Amz-(Algorithm|Credential|Date|Expires|SignedHeaders|Signature)$/.test(name)) query[name] = value;
  const signer = new SignatureV4({ service, region, credentials: { accessKeyId, secretAccessKey: SECRET_KEY }, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const [hostname, port] = req.headers.host.split(':');
  const signed = await signer.presign(
    { method: req.method, protocol: 'http:', hostname, port: port ? Number(port) : undefined, path: url.pathname, query, headers: { host: req.headers.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
    {
      signingDate: new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])),
      expiresIn: Number(params.get('X-Amz-Expires')),
      unsignableHeaders: new Set(['x-amz-content-sha256']),
      unhoistableHeaders: new Set(['x-amz-content-sha256']),
    },
  );
  if (signed.query['X-Amz-SignedHeaders'] !== params.get('X-Amz-SignedHeaders')) return null;
  return String(signed.query['X-Amz-Signature']);
}

const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: data });

server.middleware.unshift(async (ctx, next) => {
  if ('X-Amz-Algorithm' in ctx.query && 'X-Amz-Signature' in ctx.query) {
    const expected = await expectedSignature(ctx.req);
    const given = Buffer.from(String(ctx.query['X-Amz-Signature']));
    if (expected === null || (expected !== undefined && (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))))) {
      return xmlError(ctx, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    }
  }
  const abort = /^\/([^/]+)\/.+$/.exec(ctx.path);
  if (ctx.method === 'DELETE' && abort && typeof ctx.query.uploadId === 'string') {
    if (!/^[0-9a-f]{32}$/.test(ctx.query.uploadId)) return xmlError(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.');
    // s3rver keeps an upload's parts in <bucket>/._S3rver_uploads/<uploadId>/ (lib/stores/filesystem.js).
    rmSync(join(data, abort[1], '._S3rver_uploads', ctx.query.uploadId), { recursive: true, force: true });
    ctx.status = 204;
    return;
  }
  return next();
});

const getObject = server.store.getObject.bind(server.store);
server.store.getObject = async (bucket, key, options) => {
  const firstByte = options?.start === 0 && options?.end === 0;
  const object = await getObject(bucket, key, firstByte ? { start: 0, end: 1 } : options);
  if (firstByte && object?.content && object.range.end > 0) {
    object.content.destroy();
    object.content = createReadStream(server.store.getResourcePath(bucket, key, 'object'), { start: 0, end: 0 });
    object.range = { start: 0, end: 0 };
  }
  return object;
};

const { port } = await server.run();
writeFileSync(join(dir, 'port.tmp'), String(port));
renameSync(join(dir, 'port.tmp'), join(dir, 'port'));
const stop = () => {
  setTimeout(() => process.exit(0), 2000).unref(); // keep-alive connections may hold close() open
  server.close().then(() => process.exit(0), () => process.exit(1));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
