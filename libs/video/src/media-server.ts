import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';

const TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.svg': 'image/svg+xml',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.ttc': 'font/collection',
};

/**
 * Serves each render's downloaded media to the browser page and to Remotion's frame extractor, on
 * 127.0.0.1 only, under an unguessable prefix per render: `http://127.0.0.1:<port>/<token>/<file>`.
 * Range requests are answered (media elements ask for them); every answer allows any origin
 * (fonts are fetched with CORS, and sandboxed html frames have an opaque origin).
 */
export class MediaServer {
  private readonly mounts = new Map<string, string>();

  private constructor(private readonly server: Server, readonly origin: string) {}

  static async start(): Promise<MediaServer> {
    let self: MediaServer | undefined;
    const server = createServer((req, res) => {
      self?.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    self = new MediaServer(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Serves the files of `dir`; returns the base URL (ending in /) and a function that stops serving. */
  mount(dir: string): { base: string; unmount: () => void } {
    const token = randomBytes(16).toString('hex');
    this.mounts.set(token, dir);
    return { base: `${this.origin}/${token}/`, unmount: () => this.mounts.delete(token) };
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('cache-control', 'no-store');
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-private-network', 'true');
      res.writeHead(204).end();
      return;
    }
    const match = /^\/([0-9a-f]{32})\/([\w.-]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    const dir = match ? this.mounts.get(match[1]!) : undefined;
    if (!match || !dir || (req.method !== 'GET' && req.method !== 'HEAD') || match[2]!.startsWith('.')) {
      res.writeHead(404).end();
      return;
    }
    const file = join(dir, match[2]!);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.setHeader('content-type', TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream');
    res.setHeader('accept-ranges', 'bytes');
    let start = 0;
    let end = info.size - 1;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && (range[1] || range[2])) {
      start = range[1] ? Number(range[1]) : Math.max(0, info.size - Number(range[2]));
      end = range[1] && range[2] ? Math.min(end, Number(range[2])) : end;
      if (start > end || start >= info.size) {
        res.writeHead(416, { 'content-range': `bytes */${info.size}` }).end();
        return;
      }
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${info.size}`, 'content-length': end - start + 1 });
    } else {
      res.writeHead(200, { 'content-length': info.size });
    }
    if (req.method === 'HEAD' || info.size === 0) {
      res.end();
      return;
    }
    createReadStream(file, { start, end }).on('error', () => res.destroy()).pipe(res);
  }
}
