import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver took: its method, URL (with the query) and path, headers, body, and when it ended. */
export interface Hit {
  method: string;
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** A loopback webhook receiver: what it took, its base URL, and its close. */
export interface Receiver {
  /** `http://127.0.0.1:<port>`; endpoints are registered under it (`${base}/hooks`). */
  readonly base: string;
  /** Every request taken, in order. */
  readonly hits: Hit[];
  /** The bodies of the requests taken, as text. */
  texts(): string[];
  close(): Promise<void>;
}

/**
 * The webhook endpoints' receiver of the e2e tests, on a free loopback port: it keeps every request and
 * answers `answer(hit, n)` (n: how many requests its path has had, this one included), 200 by default;
 * a 2xx answer's body is `ok`.
 */
export async function startReceiver(answer: (hit: Hit, n: number) => number = () => 200): Promise<Receiver> {
  const hits: Hit[] = [];
  const perPath = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const hit: Hit = { method: req.method ?? '', url, path: url.split('?')[0]!, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      hits.push(hit);
      const n = (perPath.get(hit.path) ?? 0) + 1;
      perPath.set(hit.path, n);
      const status = answer(hit, n);
      res.writeHead(status).end(status >= 200 && status < 300 ? 'ok' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    texts: () => hits.map((h) => h.body.toString('utf8')),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
