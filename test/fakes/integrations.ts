import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The HTTP server under every loopback fake of a provider (tests only): 127.0.0.1 on a free port,
 * and a `close` that also ends the connections a client keeps alive or a `hang` mode left open.
 */
export class LoopbackServer {
  baseUrl = '';
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  private readonly opts: { keepAliveTimeoutMs?: number };

  // Plain fields, not parameter properties: Node strips these files' types (the benches), and only erasable syntax survives that.
  constructor(handle: (req: IncomingMessage, res: ServerResponse) => void, opts: { keepAliveTimeoutMs?: number } = {}) {
    this.handle = handle;
    this.opts = opts;
  }

  async start(): Promise<string> {
    const server = createServer(this.handle);
    if (this.opts.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = this.opts.keepAliveTimeoutMs;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A fake's view of one request: its URL (path, query) and its whole body. */
export interface ReceivedRequest {
  method: string;
  url: URL;
  query: Record<string, string>;
  body: Buffer;
}

/** Reads a request to a loopback fake whole (the fakes' bodies are small). */
export async function receive(req: IncomingMessage): Promise<ReceivedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const url = new URL(req.url ?? '/', 'http://fake');
  return { method: req.method ?? 'GET', url, query: Object.fromEntries(url.searchParams), body: Buffer.concat(chunks) };
}
