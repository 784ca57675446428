import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { FontCatalog, StillEngine } from '#libs/still';
import { VideoEngine } from './engine.js';
import { mapFetcher } from '#testing/video';

/**
 * PDFs that are documents (issue 21): an html invoice printed by the real Chromium as vector text over
 * the still engine's picture, read back with poppler (pdfinfo, pdftotext, pdffonts, pdfimages).
 */
const run = promisify(execFile);
const CDN = 'https://cdn.example.com';
const files = new Map<string, Buffer>();
let video: VideoEngine;
let stills: StillEngine;
let dir: string;
let printed = 0;
let paperMean: number[] = [];
/** URLs the video engine downloaded. */
const browserFetched: string[] = [];

/** A poppler tool's output on the PDF. */
async function poppler(pdf: Buffer, tool: string, ...args: string[]): Promise<string> {
  const file = join(dir, `doc-${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(file, pdf);
  const { stdout } = await run(tool, [...args, file, ...(tool === 'pdftotext' ? ['-'] : [])]);
  return stdout;
}

const INVOICE_HTML = [
  '<h1>Invoice INV-2026-0042</h1>',
  '<p class="to">Billed to: Müller &amp; Søn GmbH</p>',
  '<p>Total due: 1,234.56 EUR</p>',
  '<a href="https://pay.example.com/inv/42">Pay this invoice online</a>',
].join('');
const INVOICE_CSS = 'h1 { color: #c00000; font-size: 64px; margin: 0 0 24px } p { font-size: 32px; margin: 0 0 12px; color: #111111 } a { font-size: 32px; color: #0033cc }';

function invoice(tracks: JsonValue[][], output: Record<string, JsonValue> = {}) {
  return assertEdit({
    timeline: { background: '#ffffff', tracks: tracks.map((clips) => ({ clips })) },
    output: { format: 'pdf', size: { width: 1240, height: 1754 }, ...output },
  });
}
const html = (extra: Record<string, JsonValue> = {}): JsonValue => ({
  asset: { type: 'html', html: INVOICE_HTML, css: INVOICE_CSS, width: 1000, height: 400, position: 'topLeft' },
  start: 0, length: 1, position: 'top', offset: { y: -0.05 }, ...extra,
});
const thanks: JsonValue = {
  asset: { type: 'text', text: 'Thank you for your business', font: { family: 'Open Sans', size: 40, color: '#333333' } },
  start: 0, length: 1, position: 'bottom', offset: { y: 0.05 },
};
const paper: JsonValue = { asset: { type: 'image', src: `${CDN}/paper.png` }, start: 0, length: 1 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdf-doc-test-'));
  files.set(`${CDN}/logo.png`, await sharp({ create: { width: 600, height: 240, channels: 3, background: '#1d3557', noise: { type: 'gaussian', mean: 60, sigma: 30 } } }).png().toBuffer());
  const paperBytes = await sharp({ create: { width: 1240, height: 1754, channels: 3, background: '#f4eedc', noise: { type: 'gaussian', mean: 230, sigma: 6 } } }).png().toBuffer();
  files.set(`${CDN}/paper.png`, paperBytes);
  paperMean = (await sharp(paperBytes).stats()).channels.map((channel) => channel.mean);
  const fetch = mapFetcher(files);
  video = await VideoEngine.start({ fetch: async (url) => { browserFetched.push(url); return fetch(url); } });
  const fonts = await FontCatalog.system();
  stills = new StillEngine({
    fonts,
    fetch: mapFetcher(files),
    browserStill: (edit, opts) => video.renderHtmlStill(edit, opts),
    printHtml: async (edit, opts) => {
      printed++;
      return video.printHtmlClips(edit, opts);
    },
  });
}, 90_000);

afterAll(async () => {
  await video?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('PDF documents (issue 21)', () => {
  it('an html invoice over a picture: A4 page, the html and the text clip as real text in embedded subset fonts, the link kept, the picture at its resolution', async () => {
    const before = printed;
    browserFetched.length = 0;
    const out = await stills.render(invoice([[html()], [thanks], [paper]]));
    // The browser printed the html only: the paper picture was not downloaded for it.
    expect(browserFetched).toEqual([]);
    if (process.env.PDF_DUMP) await writeFile(process.env.PDF_DUMP, out.bytes);
    expect(printed).toBe(before + 1);
    expect(out.contentType).toBe('application/pdf');

    const info = await poppler(out.bytes, 'pdfinfo');
    expect(info).toMatch(/^Pages:\s+1$/m);
    expect(info).toMatch(/^Page size:\s+595\.2 x 841\.92 pts \(A4\)$/m);

    const text = await poppler(out.bytes, 'pdftotext', '-layout');
    for (const words of ['Invoice INV-2026-0042', 'Billed to: Müller & Søn GmbH', 'Total due: 1,234.56 EUR', 'Pay this invoice online', 'Thank you for your business']) {
      expect(text).toContain(words);
    }
    // The html's and the text clip's fonts are embedded subsets (Chromium's print).
    const fonts = (await poppler(out.bytes, 'pdffonts')).split('\n').slice(2).filter(Boolean);
    const embeddedSubsets = fonts.filter((row) => /\s(yes)\s+(yes)\s+(yes|no)\s+\d+\s+\d+\s*$/.test(row));
    expect(embeddedSubsets.length).toBeGreaterThan(0);
    expect(embeddedSubsets[0]).toMatch(/^[A-Z]{6}\+/);

    expect(await poppler(out.bytes, 'pdfinfo', '-url')).toContain('https://pay.example.com/inv/42');

    // One picture: the paper at its own 1240×1754 pixels (150 dpi on A4); the text clip's words are
    // vector text printed by the browser, no picture of them (issue 32: "PDF text clips").
    const images = (await poppler(out.bytes, 'pdfimages', '-list')).split('\n').slice(2).filter(Boolean).filter((row) => row.trim().split(/\s+/)[2] === 'image');
    expect(images.map((row) => row.trim().split(/\s+/).slice(3, 5).join('x'))).toEqual(['1240x1754']);
    expect(images[0]).toMatch(/\s150\s+150\s/);

    // Drawn where the layout puts it: the red heading near the top, the paper colour elsewhere.
    const page = join(dir, 'page');
    await writeFile(`${page}.pdf`, out.bytes);
    await run('pdftoppm', ['-png', '-singlefile', '-r', '150', `${page}.pdf`, page]);
    const { data, info: raster } = await sharp(`${page}.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([raster.width, raster.height]).toEqual([1240, 1754]);
    let red = 0;
    let redLow = 0;
    for (let y = 0; y < raster.height; y++) {
      for (let x = 0; x < raster.width; x++) {
        const i = (y * raster.width + x) * 3;
        if (data[i]! > 160 && data[i + 1]! < 60 && data[i + 2]! < 60) {
          red++;
          if (y > 400) redLow++;
        }
      }
    }
    expect(red).toBeGreaterThan(2000);
    expect(redLow).toBe(0);
    // The paper is grey noise (mean 230, sigma 6): one pixel can stray far, so a 40×40 patch in the
    // bottom-left corner is averaged and must match the picture's own mean.
    const patch = [0, 0, 0];
    for (let y = 1680; y < 1720; y++) {
      for (let x = 20; x < 60; x++) for (let c = 0; c < 3; c++) patch[c]! += data[(y * raster.width + x) * 3 + c]!;
    }
    const drift = patch.map((sum, c) => Math.abs(sum / 1600 - paperMean[c]!));
    expect(Math.max(...drift)).toBeLessThan(6);
  }, 60_000);

  it('a test render\'s watermark lies over the printed html too', async () => {
    const edit = invoice([[html({ asset: { type: 'html', html: INVOICE_HTML, css: INVOICE_CSS, width: 1000, height: 400, position: 'topLeft', background: '#ffffff' } })], [paper]]);
    const page = async (watermark: boolean) => {
      const out = await stills.render(edit, { watermark });
      const file = join(dir, `wm-${watermark}`);
      await writeFile(`${file}.pdf`, out.bytes);
      // The html's white box only (1000×400 design px near the top: 240×96 px at 36 dpi).
      await run('pdftoppm', ['-png', '-singlefile', '-r', '36', '-x', '32', '-y', '24', '-W', '230', '-H', '88', `${file}.pdf`, file]);
      return sharp(`${file}.png`).removeAlpha().raw().toBuffer();
    };
    const [live, test] = await Promise.all([page(false), page(true)]);
    let marked = 0;
    for (let i = 0; i < live.length; i += 3) if (Math.abs(live[i]! - test[i]!) + Math.abs(live[i + 1]! - test[i + 1]!) + Math.abs(live[i + 2]! - test[i + 2]!) > 12) marked++;
    expect(marked).toBeGreaterThan(300);
  }, 60_000);

  it('a fixed page (Letter) fits the same frame, centred; a picture inside the html keeps its own pixels', async () => {
    const withLogo = html({ asset: { type: 'html', html: `<img src="${CDN}/logo.png" style="width:150px">${INVOICE_HTML}`, css: INVOICE_CSS, width: 1000, height: 400, position: 'topLeft' } });
    browserFetched.length = 0;
    const out = await stills.render(invoice([[withLogo], [paper]], { pdf: { pageSize: 'Letter' } }));
    expect(browserFetched).toEqual([`${CDN}/logo.png`]);
    expect(await poppler(out.bytes, 'pdfinfo')).toMatch(/^Page size:\s+612 x 792 pts \(letter\)$/m);
    expect(await poppler(out.bytes, 'pdftotext')).toContain('Invoice INV-2026-0042');
    const images = (await poppler(out.bytes, 'pdfimages', '-list')).split('\n').slice(2).filter(Boolean);
    expect(images.map((row) => row.trim().split(/\s+/).slice(3, 5).join('x')).sort()).toEqual(['1240x1754', '600x240']);
  }, 60_000);

  it('a filtered html clip (what a PDF cannot express) is drawn by the browser alone, a picture of that clip; the rest stay layers (issue 32)', async () => {
    const before = printed;
    const out = await stills.render(invoice([[thanks], [html({ filter: 'greyscale' })], [paper]]));
    // One print: the text clip's (vector text, "PDF text clips"); the filtered html is not printed.
    expect(printed).toBe(before + 1);
    expect(await poppler(out.bytes, 'pdfinfo')).toMatch(/^Page size:\s+595\.2 x 841\.92 pts \(A4\)$/m);
    const words = await poppler(out.bytes, 'pdftotext');
    expect(words).not.toContain('Invoice INV-2026-0042');
    // The text clip's words are text; the paper is still its own image object.
    expect(words).toContain('Thank you for your business');
    const images = (await poppler(out.bytes, 'pdfimages', '-list')).split('\n').slice(2).filter(Boolean).map((row) => row.trim().split(/\s+/))
      .filter((c) => c[2] === 'image').map((c) => [Number(c[3]), Number(c[4])] as const);
    expect(images[0]).toEqual([1240, 1754]);
    // The html's picture: no larger than its 1000×400 box (the transparent rest of the frame left out).
    const picture = images.slice(1).find(([w, h]) => w > 600 && h > 100);
    expect(picture).toBeDefined();
    expect(picture![0]).toBeLessThanOrEqual(1000);
    expect(picture![1]).toBeLessThanOrEqual(400);
  }, 60_000);
});
