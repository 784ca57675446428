import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { ACCEPTED_ASSET_FORMATS, ASSET_HEAD_BYTES, detectAssetType } from './asset-type.js';
import { lottieJson, sampleMedia, silentMp3, woffFromSfnt } from '#testing/media';

/** What the upload route does: only the first ASSET_HEAD_BYTES reach the detector. */
const detect = (file: Buffer) => detectAssetType(file.subarray(0, ASSET_HEAD_BYTES));
const FONTS = '/usr/share/fonts';
const WOFF2 = readFileSync(join(import.meta.dirname, 'fixtures/open-sans-regular.woff2'));

function box(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}
const ftyp = (...brands: string[]) => box('ftyp', Buffer.from(brands[0] + '\0\0\0\0' + brands.slice(1).join(''), 'latin1'));

describe('asset type from the bytes (issue 14: "Type from the bytes")', () => {
  it('types the five image formats', async () => {
    const image = sharp({ create: { width: 8, height: 8, channels: 3, background: '#c04020' } });
    expect(detect(await image.clone().png().toBuffer())).toEqual({ type: 'image', mimeType: 'image/png', ext: 'png' });
    expect(detect(await image.clone().jpeg().toBuffer())).toEqual({ type: 'image', mimeType: 'image/jpeg', ext: 'jpg' });
    expect(detect(await image.clone().webp().toBuffer())).toEqual({ type: 'image', mimeType: 'image/webp', ext: 'webp' });
    expect(detect(await image.clone().gif().toBuffer())).toEqual({ type: 'image', mimeType: 'image/gif', ext: 'gif' });
    expect(detect(await image.clone().avif().toBuffer())).toEqual({ type: 'image', mimeType: 'image/avif', ext: 'avif' });
  });

  it('types mp4, mov and webm, and refuses Matroska that is not WebM', async () => {
    expect(detect(await sampleMedia.mp4())).toEqual({ type: 'video', mimeType: 'video/mp4', ext: 'mp4' });
    expect(detect(await sampleMedia.mov())).toEqual({ type: 'video', mimeType: 'video/quicktime', ext: 'mov' });
    expect(detect(await sampleMedia.webm())).toEqual({ type: 'video', mimeType: 'video/webm', ext: 'webm' });
    expect(detect(await sampleMedia.mkv())).toBeNull();
    // An old QuickTime file has no ftyp: its atoms come first.
    expect(detect(Buffer.concat([box('wide'), box('mdat', Buffer.alloc(64))]))).toMatchObject({ ext: 'mov' });
  });

  it('types the five audio formats, an mp3 with or without its ID3 tag', async () => {
    expect(detect(await sampleMedia.mp3())).toEqual({ type: 'audio', mimeType: 'audio/mpeg', ext: 'mp3' });
    const bare = await silentMp3(1 / 3600);
    expect(bare.subarray(0, 3).toString('latin1')).not.toBe('ID3');
    expect(detect(bare)).toMatchObject({ ext: 'mp3' });
    expect(detect(await sampleMedia.wav())).toEqual({ type: 'audio', mimeType: 'audio/wav', ext: 'wav' });
    expect(detect(await sampleMedia.ogg())).toEqual({ type: 'audio', mimeType: 'audio/ogg', ext: 'ogg' });
    expect(detect(await sampleMedia.flac())).toEqual({ type: 'audio', mimeType: 'audio/flac', ext: 'flac' });
    expect(detect(await sampleMedia.m4a())).toEqual({ type: 'audio', mimeType: 'audio/mp4', ext: 'm4a' });
    // An mp4 whose only track is audio has a video brand: inspection finds out.
    expect(detect(await sampleMedia.audioOnlyMp4())).toMatchObject({ type: 'video', ext: 'mp4' });
  });

  it('looks past an ID3 tag: FLAC behind it is FLAC, garbage behind it is nothing', async () => {
    const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 20, ...Buffer.alloc(20)]);
    expect(detect(Buffer.concat([id3, await sampleMedia.flac()]))).toMatchObject({ ext: 'flac' });
    expect(detect(Buffer.concat([id3, Buffer.from('this is not audio at all, just text')]))).toBeNull();
  });

  it('types ttf, otf, woff and woff2, and refuses font collections', () => {
    const ttf = readFileSync(`${FONTS}/truetype/lato/Lato-Medium.ttf`);
    expect(detect(ttf)).toEqual({ type: 'font', mimeType: 'font/ttf', ext: 'ttf' });
    expect(detect(readFileSync(`${FONTS}/opentype/bebas-neue/BebasNeue-Regular.otf`))).toEqual({ type: 'font', mimeType: 'font/otf', ext: 'otf' });
    expect(detect(woffFromSfnt(ttf))).toEqual({ type: 'font', mimeType: 'font/woff', ext: 'woff' });
    expect(detect(WOFF2)).toEqual({ type: 'font', mimeType: 'font/woff2', ext: 'woff2' });
    expect(detect(readFileSync(`${FONTS}/opentype/noto/NotoSansCJK-Regular.ttc`))).toBeNull();
  });

  it('types SVG by its root element, after a BOM, a declaration, comments and a DOCTYPE', () => {
    const svg = (s: string) => detect(Buffer.from(s));
    expect(svg('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')).toEqual({ type: 'svg', mimeType: 'image/svg+xml', ext: 'svg' });
    expect(svg('\uFEFF<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg>')).toMatchObject({ ext: 'svg' });
    expect(svg('<svg:svg xmlns:svg="http://www.w3.org/2000/svg"></svg:svg>')).toMatchObject({ ext: 'svg' });
    expect(svg('<!DOCTYPE html><html><body><svg></svg></body></html>')).toBeNull();
    expect(svg('<?xml version="1.0"?><rss version="2.0"></rss>')).toBeNull();
    expect(svg('hello <svg></svg>')).toBeNull();
  });

  it('types Lottie JSON by its top-level keys, also when they follow more than the head holds', () => {
    expect(detect(Buffer.from(lottieJson()))).toEqual({ type: 'lottie', mimeType: 'application/json', ext: 'json' });
    expect(detect(Buffer.from(`\uFEFF  ${lottieJson()}`))).toMatchObject({ ext: 'json' });
    const { layers: _, ...noLayers } = JSON.parse(lottieJson()) as Record<string, unknown>;
    expect(detect(Buffer.from(JSON.stringify(noLayers)))).toBeNull();
    expect(detect(Buffer.from('[{"v":"5","fr":30,"ip":0,"op":60,"layers":[]}]'))).toBeNull();
    expect(detect(Buffer.from('{"name":"package","version":"1.0.0"}'))).toBeNull();
    // Embedded images (base64) can push `layers` far past the head: the keys seen so far decide.
    const big = `{"v":"5.7.4","fr":30,"ip":0,"op":60,"w":512,"h":512,"assets":[{"id":"i","p":"data:image/png;base64,${'A'.repeat(200_000)}"}],"layers":[]}`;
    expect(detect(Buffer.from(big))).toMatchObject({ type: 'lottie' });
    expect(detect(Buffer.from(`{"name":"x","data":"${'A'.repeat(200_000)}","v":"1"}`))).toBeNull();
    expect(detect(Buffer.from('{"v":"5.7.4","fr":30,"ip":0,"op":60,"layers":[] garbage'))).toBeNull();
  });

  it('refuses everything else', () => {
    const refused = [
      Buffer.alloc(0),
      Buffer.from('plain text, not media'),
      Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj'),
      Buffer.from('PK\x03\x04\x14\x00\x00\x00', 'latin1'),
      Buffer.from('\x7fELF\x02\x01\x01', 'latin1'),
      Buffer.from('RIFF\x24\x00\x00\x00AVI LIST', 'latin1'),
      Buffer.concat([ftyp('avci', 'mif1', 'avci'), Buffer.alloc(32)]), // H.264 in HEIF: neither sharp nor heif-convert here reads it
      Buffer.concat([ftyp('crx ', 'isom'), Buffer.alloc(32)]),
      Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x2a\x80theora', 'latin1'),
      Buffer.from([0xff, 0xfb, 0x90, 0x64, ...Buffer.from('but what follows is no second frame at all, this is text....'.repeat(10))]),
      Buffer.from('<html><body>hi</body></html>'),
      Buffer.from('{"just":"json"}'),
    ];
    for (const bytes of refused) expect([bytes.subarray(0, 12).toString('latin1'), detect(bytes)]).toEqual([bytes.subarray(0, 12).toString('latin1'), null]);
  });

  it('names every accepted format for the refusal message', () => {
    for (const name of ['png', 'jpeg', 'webp', 'gif', 'avif', 'heic', 'mp4', 'mov', 'webm', 'mp3', 'wav', 'ogg', 'flac', 'm4a', 'ttf', 'otf', 'woff', 'woff2', 'lottie', 'svg']) {
      expect(ACCEPTED_ASSET_FORMATS).toContain(name);
    }
  });
});
