import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { withFamilyName } from '#testing/media';
import { frameAt } from '#testing/video';
import { fetchStored, startApi, type TestApi } from './harness.js';
import { until as poll } from './render-helpers.js';

// Issue 27 ("The browser renders only what the outbound rules allowed"): whatever an edit carries
// into the video page's CSS or HTML (font family names of timeline.fonts, html assets' css and
// html, text and caption styles, colours), the browser fetches nothing but the render's own media
// server, and the frame is drawn as with harmless values. docs/decisions.md "Hostile input (issue
// 27): browser".

/** A copy of DejaVu Sans whose name table declares `family`. */
const fontNamed = (family: string) => withFamilyName(readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'), family);

describe('hostile input in the browser engine (issue 27): the page fetches only the media server', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let key: string;
  let trap: Server;
  let origin: string;
  /** Requests the browser made to the loopback listener (the Node side's downloads are not counted). */
  const fromBrowser: string[] = [];
  /** The font files the listener serves, by path. */
  const fonts = new Map<string, Buffer>();

  const MAGENTA = '#ff00ff';
  const post = (body: unknown, query = '') => api.app.inject({ method: 'POST', url: `/api/v1/render${query}`, headers: { 'x-api-key': key }, payload: body as object });
  const settled = (id: string) =>
    poll(async () => {
      const data = (await api.app.inject({ method: 'GET', url: `/api/v1/render/${id}`, headers: { 'x-api-key': key } })).json().data;
      return ['done', 'failed', 'cancelled'].includes(data.status) ? data : undefined;
    }, 'the render', 180_000, 250);

  /**
   * Each hostile string tries to restyle the whole page magenta and to load from the listener:
   * a quote, apostrophe, backslash, `</style>` or `}` closes the quoted family, then `@import`,
   * `url()` and `image-set()`. (A form feed or newline, the attack first seen, is refused by the
   * font reader before it gets here: the last test; the escape covers them too: libs/video pure.spec.)
   */
  const hostile = (tag: string) => [
    `Evil'}*{background:${MAGENTA} url(${origin}/${tag}-apos-url) !important}@import url(${origin}/${tag}-apos-import);x{`,
    `Tag</style><style>body{background-image:image-set(url(${origin}/${tag}-tag-set) 1x) !important;background-color:${MAGENTA} !important}</style><style>x{`,
    `Q"}html{background:url("${origin}/${tag}-quote-url") ${MAGENTA} !important}x{font-family:"`,
    `B\\"}div{background:url(${origin}/${tag}-bs-url) ${MAGENTA} !important}x{`,
  ];
  const fontsOf = (tag: string) => hostile(tag).map((_, i) => ({ src: `${origin}/fonts/${tag}-${i}.ttf` }));
  const hostileCss = (tag: string) => `@import url(${origin}/${tag}-css-import); body { background: url(${origin}/${tag}-css-url) } p { background-image: image-set("${origin}/${tag}-css-set" 1x) }`;
  /**
   * A PDF's html clip is printed in a tab of its own: a meta refresh would navigate that tab to any
   * loopback port (the document's CSP cannot stop a top-level navigation); the tab's requests are
   * failed unless they go to the media server (print.ts printMayLoad).
   */
  const refreshes = (tag: string) => `<meta http-equiv="refresh" content="0;url=${origin}/${tag}-refresh"><meta http-equiv="refresh" content="0;url=${origin.replace('127.0.0.1', 'localhost')}/${tag}-refresh-localhost">`;
  const hostileHtml = (tag: string) => `<p style="background-image:image-set('${origin}/${tag}-style-set' 1x)">Hi</p><img srcset="${origin}/${tag}-srcset 1x"><link rel="stylesheet" href="${origin}/${tag}-link.css"><iframe src="${origin}/${tag}-frame"></iframe>`;

  /** The edit with hostile values, or the same edit with harmless ones. */
  const edit = (tag: string, harmless: boolean, format: 'mp4' | 'png' | 'pdf') => {
    const families = harmless ? ['DejaVu Sans'] : hostile(tag);
    return {
      timeline: {
        background: '#1d3557',
        ...(harmless ? {} : { fonts: fontsOf(tag) }),
        tracks: [
          { clips: [{ asset: { type: 'html', html: harmless ? '<p>Hi</p>' : hostileHtml(tag) + (format === 'pdf' ? refreshes(tag) : ''), css: harmless ? 'p { color: #ffffff }' : `p { color: #ffffff } ${hostileCss(tag)}`, width: 80, height: 40 }, start: 0, length: 1, position: 'topLeft' }] },
          { clips: [{ asset: { type: 'text', text: 'Yo', font: { family: families[0], size: 20, color: '#ffffff' } }, start: 0, length: 1, position: 'bottomRight' }] },
          ...(format === 'mp4' ? [{ clips: [{ asset: { type: 'caption', src: `${origin}/captions.srt`, font: { family: families[2], size: 10, color: '#ffffff' } }, start: 0, length: 1 }] }] : []),
        ],
      },
      output: { format, size: { width: 160, height: 90 }, ...(format === 'mp4' ? { fps: 12 } : {}) },
    };
  };

  /** Pixels of two frames differing by more than a little (encoding noise). */
  const differing = async (a: Buffer, b: Buffer) => {
    const [x, y] = await Promise.all([a, b].map((i) => sharp(i).removeAlpha().raw().toBuffer()));
    let n = 0;
    for (let i = 0; i < x!.length; i += 3) if (Math.abs(x![i]! - y![i]!) + Math.abs(x![i + 1]! - y![i + 1]!) + Math.abs(x![i + 2]! - y![i + 2]!) > 60) n++;
    return n;
  };
  const magentaPixels = async (img: Buffer) => {
    const { data, info } = await sharp(img).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let n = 0;
    for (let i = 0; i < data.length; i += info.channels) if (data[i]! > 200 && data[i + 1]! < 80 && data[i + 2]! > 200) n++;
    return n;
  };

  beforeAll(async () => {
    const clear = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    trap = createServer((req, res) => {
      const url = req.url ?? '';
      if (/HeadlessChrome|Chrome\//.test(req.headers['user-agent'] ?? '')) fromBrowser.push(url);
      const font = fonts.get(url);
      if (font) return void res.writeHead(200, { 'content-type': 'font/ttf' }).end(font);
      if (url === '/captions.srt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('1\n00:00:00,000 --> 00:00:05,000\nHello\n');
      // Anything else: a clear picture (html assets' url() files are downloaded by the Node side,
      // not counted, and served to the page from the media server).
      res.writeHead(200, { 'content-type': 'image/png', 'access-control-allow-origin': '*' }).end(clear);
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    for (const tag of ['mp4', 'png', 'pdf']) hostile(tag).forEach((family, i) => fonts.set(`/fonts/${tag}-${i}.ttf`, fontNamed(family)));
    // Outbound policy: development in tests, so the font and caption downloads may reach loopback.
    api = await startApi({ VIDEO_ENGINE: 'on' });
    worker = await createWorkerApp(api.config);
    ({ liveKey: key } = (await api.cli('workspace:create', '--name', 'Hostile browser', '--plan', 'pro')).json as { liveKey: string });
    // The engine starts in the background (bundle + browser): a still with an html clip draws once it runs.
    await poll(async () => (await post({ edit: edit('warm', true, 'png') }, '?format=binary')).statusCode === 200 || undefined, 'the engine', 180_000, 500);
  }, 240_000);

  beforeEach(() => {
    fromBrowser.length = 0;
  });

  afterAll(async () => {
    await worker.close();
    await api.close();
    trap.close();
  });

  it('a colour that is not a colour is refused (§7 422 TEMPLATE_VALIDATION_FAILED), never written into the page', async () => {
    const bad = edit('colour', true, 'png');
    (bad.timeline.tracks[1]!.clips[0]!.asset as { font: { color: string } }).font.color = `#fff;background:url(${origin}/colour)`;
    const res = await post({ edit: bad }, '?format=binary');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'TEMPLATE_VALIDATION_FAILED', errors: { 'edit.timeline.tracks[1].clips[0].asset.font.color': expect.any(Array) } });
  });

  it('an mp4 whose fonts, html, css and styles carry CSS: the browser fetches nothing from the listener and the frame is the harmless edit\'s', async () => {
    const frames: Buffer[] = [];
    for (const harmless of [false, true]) {
      const res = await post({ edit: edit('mp4', harmless, 'mp4') });
      expect(res.statusCode).toBe(202);
      const done = await settled(res.json().data.id);
      expect([done.status, done.error]).toEqual(['done', null]);
      const dir = mkdtempSync(join(tmpdir(), 'hostile-browser-'));
      try {
        const file = join(dir, 'out.mp4');
        writeFileSync(file, (await fetchStored(api, done.url)).body);
        frames.push(await frameAt(file, 0.5));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(fromBrowser).toEqual([]);
    expect(await magentaPixels(frames[0]!)).toBe(0);
    // The hostile family names fall back to the default face where the harmless one is DejaVu: the
    // text differs a little, never the background.
    expect(await differing(frames[0]!, frames[1]!)).toBeLessThan(160 * 90 * 0.05);
  }, 400_000);

  it('a png still drawn by the browser: nothing fetched, nothing restyled', async () => {
    const [hostileShot, harmlessShot] = await Promise.all([false, true].map(async (harmless) => {
      const res = await post({ edit: edit('png', harmless, 'png') }, '?format=binary');
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/png']);
      return res.rawPayload;
    }));
    expect(fromBrowser).toEqual([]);
    expect(await magentaPixels(hostileShot!)).toBe(0);
    expect(await differing(hostileShot!, harmlessShot!)).toBeLessThan(160 * 90 * 0.05);
  }, 200_000);

  it('a pdf whose html clip carries CSS, hostile fonts and meta refreshes to loopback: printed without a fetch from the listener or a magenta page', async () => {
    const res = await post({ edit: edit('pdf', false, 'pdf') }, '?format=binary');
    // A refresh that slipped through would reach the listener around the tab's close: a moment's grace.
    await new Promise((r) => setTimeout(r, 500));
    expect(fromBrowser).toEqual([]);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'application/pdf']);
    const dir = mkdtempSync(join(tmpdir(), 'hostile-browser-pdf-'));
    try {
      const file = join(dir, 'doc.pdf');
      writeFileSync(file, res.rawPayload);
      execFileSync('pdftoppm', ['-png', '-r', '72', '-singlefile', file, join(dir, 'page')]);
      expect(await magentaPixels(readFileSync(join(dir, 'page.png')))).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(fromBrowser).toEqual([]);
  }, 200_000);

  it('a family name with a form feed or newline (the attack first seen) never reaches the page: 422 MEDIA_UNAVAILABLE naming the font', async () => {
    const controlled = [`Evil\f}*{background:url(${origin}/ff-url)}`, `Nl\n}body{background:url(${origin}/nl-url)}`];
    controlled.forEach((family, i) => fonts.set(`/fonts/control-${i}.ttf`, fontNamed(family)));
    const res = await post({ edit: { ...edit('control', true, 'png'), timeline: { ...edit('control', true, 'png').timeline, fonts: controlled.map((_, i) => ({ src: `${origin}/fonts/control-${i}.ttf` })) } } }, '?format=binary');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'MEDIA_UNAVAILABLE',
      errors: { 'edit.timeline.fonts[0].src': [expect.stringContaining('U+000C')], 'edit.timeline.fonts[1].src': [expect.stringContaining('U+000A')] },
    });
    expect(fromBrowser).toEqual([]);
  });

  it('the browser runs as an unprivileged user or with its sandbox on (read from /proc), its profile in the engine\'s own folder', () => {
    const browsers = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        // The browser processes this test's engines started (not their child processes).
        if (Number(/^PPid:\s+(\d+)/m.exec(status)![1]) !== process.pid || !args.includes('--remote-debugging-port=0')) return [];
        return [{ pid, args, uid: Number(/^Uid:\s+(\d+)/m.exec(status)![1]) }];
      } catch {
        return [];
      }
    });
    expect(browsers.length).toBeGreaterThan(0);
    for (const b of browsers) {
      const sandboxed = !b.args.includes('--no-sandbox');
      expect({ pid: b.pid, unprivileged: b.uid !== 0 || sandboxed }).toEqual({ pid: b.pid, unprivileged: true });
      expect(b.args.find((a) => a.startsWith('--user-data-dir='))).toMatch(/\/(browser-profiles|video-engine-profiles-\w+)\/chromium-[\w.-]+-\d+-\w+$/);
      expect(b.args).toContain('--proxy-server=http://127.0.0.1:9');
    }
  });
});
