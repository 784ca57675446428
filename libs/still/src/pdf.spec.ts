import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { pdfPageLayout } from '#libs/edit-spec';
import { PdfLayers, pngPixelData } from './pdf.js';

const run = promisify(execFile);

/** Poppler (an outside reader) on a PDF: `pdftoppm` draws the page at `widthPx`; `pdfimages` takes out the embedded pictures. */
async function poppler(pdf: Buffer, tool: 'pdftoppm' | 'pdfimages', widthPx = 0): Promise<{ data: Buffer; width: number; height: number }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pdf-spec-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    const args = tool === 'pdftoppm' ? ['-png', '-singlefile', '-scale-to-x', String(widthPx), '-scale-to-y', '-1'] : ['-png'];
    await run(tool, [...args, join(dir, 'doc.pdf'), join(dir, 'out')]);
    const files = readdirSync(dir).filter((f) => f.startsWith('out') && f.endsWith('.png')).sort();
    return Promise.all(files.map(async (f) => {
      const { data, info } = await sharp(readFileSync(join(dir, f))).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      return { data, width: info.width, height: info.height };
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('PDF page image', () => {
  const width = 240;
  const height = 160;
  const view = { width, height, page: pdfPageLayout({ format: 'pdf', pdf: { dpi: 72 } }, { width: 120, height: 80 }) };
  /** A page holding `rgba` (the frame's pixels) as one picture. */
  const pageOf = async (rgba: Buffer) => {
    const pdf = await PdfLayers.create(view);
    await pdf.picture(rgba, width, height, 0, 0);
    return pdf.save();
  };

  test('a picture holds its own pixels, read back exactly by poppler (the PNG rows go in as they are), with no soft mask when opaque', async () => {
    const { data: rgba } = await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 }, noise: { type: 'gaussian', mean: 120, sigma: 60 } } })
      .ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const pdf = await pageOf(rgba);
    expect(pdf.includes('/SMask')).toBe(false);
    const [image, ...others] = await poppler(pdf, 'pdfimages');
    expect(others).toEqual([]);
    expect([image!.width, image!.height]).toEqual([width, height]);
    const rgb = await sharp(rgba, { raw: { width, height, channels: 4 } }).removeAlpha().raw().toBuffer();
    expect(image!.data.equals(rgb)).toBe(true);
  });

  test('a picture\'s transparent edges are left out, its alpha kept as a soft mask (shown over white)', async () => {
    const rgba = Buffer.alloc(width * height * 4);
    for (let p = 0; p < width * height; p++) rgba.set([0, 0, 255, p % width < width / 2 ? (p % width < 20 ? 128 : 255) : 0], p * 4);
    const pdf = await pageOf(rgba);
    expect(pdf.includes('/SMask')).toBe(true);
    const [image] = await poppler(pdf, 'pdfimages');
    expect([image!.width, image!.height]).toEqual([width / 2, height]);
    const [page] = await poppler(pdf, 'pdftoppm', width);
    expect([page!.width, page!.height]).toEqual([width, height]);
    const px = (x: number, y: number) => [...page!.data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];
    expect(px(10, 80)).toEqual([127, 127, 255]);
    expect(px(60, 80)).toEqual([0, 0, 255]);
    expect(px(230, 80)).toEqual([255, 255, 255]);
  });

  test('reads the pixel data of a PNG split over several IDAT chunks, and refuses what a PDF cannot take as it is', async () => {
    const grey = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 80 } } }).extractChannel(0).png().toBuffer();
    const whole = pngPixelData(grey);
    expect(whole).toMatchObject({ width: 300, height: 300, colors: 1 });
    // The same PNG with its pixel data cut into three IDAT chunks: the stream is joined back whole.
    const chunk = (type: string, data: Buffer) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(data.length, 0);
      head.write(type, 4, 'latin1');
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
      return Buffer.concat([head, data, crc]);
    };
    const thirds = [0, 1, 2].map((k) => whole.data.subarray(Math.floor((k * whole.data.length) / 3), Math.floor(((k + 1) * whole.data.length) / 3)));
    const split = Buffer.concat([grey.subarray(0, 33), ...thirds.map((d) => chunk('IDAT', d)), chunk('IEND', Buffer.alloc(0))]);
    expect((await sharp(split).raw().toBuffer()).equals(await sharp(grey).raw().toBuffer())).toBe(true);
    expect(pngPixelData(split).data.equals(whole.data)).toBe(true);
    await expect(sharp(Buffer.alloc(16 * 16 * 4), { raw: { width: 16, height: 16, channels: 4 } }).png().toBuffer().then(pngPixelData)).rejects.toThrow(/grey or RGB/);
    await expect(sharp(Buffer.alloc(16 * 16 * 3), { raw: { width: 16, height: 16, channels: 3 } }).png({ progressive: true }).toBuffer().then(pngPixelData)).rejects.toThrow(/non-interlaced/);
    expect(() => pngPixelData(Buffer.from('GIF89a'))).toThrow(/not a PNG/);
  });
});
