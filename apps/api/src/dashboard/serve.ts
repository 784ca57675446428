import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { repoFolder, type AppConfig } from '#libs/core';

/**
 * The web dashboard (apps/dashboard, issue 18) at the root of the host, beside the API under its
 * prefix (docs/decisions.md "Dashboard"): the hashed files under /assets/ cached for a year and sent
 * brotli- or gzip-compressed from the copies the build writes, and
 * index.html (never cached) for `/` and for any other GET no route answers that asks for a page
 * (Accept: text/html) outside the API and /files, so a reload of /renders/rnd_… opens the app.
 * Without a build, such requests get a plain 404 page saying how to build it; the API is unaffected.
 */

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>
<body><main><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (it writes apps/dashboard/dist), or set
<code>DASHBOARD_DIR</code> to a built dashboard, then restart the API. The API itself answers under <a href="/api/docs">/api</a>.</p></main></body></html>`;

/** Where the built dashboard is: DASHBOARD_DIR, else apps/dashboard/dist of this checkout; null when neither holds an index.html. */
export function dashboardDir(config: AppConfig): string | null {
  let dir = config.dashboardDir;
  if (dir === null) {
    try {
      dir = repoFolder(import.meta.url, 'apps/dashboard/dist', 'dashboard/dist');
    } catch {
      return null;
    }
  }
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

/** A browser asking for a page no route serves: `/`, or a GET/HEAD wanting HTML outside the API's prefix and /files. */
function wantsPage(req: FastifyRequest, prefix: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (req.routeOptions.url !== undefined) return false;
  const path = req.url.split('?', 1)[0]!;
  if (prefix && (path === `/${prefix}` || path.startsWith(`/${prefix}/`))) return false;
  if (path.startsWith('/files/') || path.startsWith('/assets/')) return false;
  return path === '/' || (req.headers.accept ?? '').includes('text/html');
}

export async function mountDashboard(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  const dir = dashboardDir(config);
  const fastify = app.getHttpAdapter().getInstance();
  if (dir && existsSync(join(dir, 'assets'))) {
    await app.register(fastifyStatic as never, {
      root: join(dir, 'assets'),
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      // Cache-Control: public, max-age=31536000, immutable (the names carry the content's hash).
      maxAge: '365d',
      immutable: true,
      // The .br / .gz copies the build writes (scripts/compress-dashboard.mjs), by Accept-Encoding, with Vary.
      preCompressed: true,
    });
  }
  const page = dir ? readFileSync(join(dir, 'index.html'), 'utf8') : NOT_BUILT;
  fastify.addHook('onRequest', (req, reply, done) => {
    if (!wantsPage(req, config.prefix)) return done();
    void reply
      .code(dir ? 200 : 404)
      .header('cache-control', 'no-cache')
      .header('content-type', 'text/html; charset=utf-8')
      .send(page);
  });
}
