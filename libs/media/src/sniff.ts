import { open } from 'node:fs/promises';

/** Media kinds the renderers take. */
export type MediaKind = 'image' | 'video' | 'audio' | 'font' | 'svg';

export interface Sniffed {
  kind: MediaKind;
  mime: string;
}

function startsWith(buf: Buffer, bytes: number[], at = 0): boolean {
  return buf.length >= at + bytes.length && bytes.every((b, i) => buf[at + i] === b);
}

/** Content type from the bytes themselves (the server's Content-Type is not trusted). */
export function sniff(buf: Buffer): Sniffed | null {
  if (startsWith(buf, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { kind: 'image', mime: 'image/png' };
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return { kind: 'image', mime: 'image/jpeg' };
  if (startsWith(buf, [0x47, 0x49, 0x46, 0x38])) return { kind: 'image', mime: 'image/gif' };
  if (startsWith(buf, [0x52, 0x49, 0x46, 0x46]) && startsWith(buf, [0x57, 0x45, 0x42, 0x50], 8)) return { kind: 'image', mime: 'image/webp' };
  if (startsWith(buf, [0x52, 0x49, 0x46, 0x46]) && startsWith(buf, [0x57, 0x41, 0x56, 0x45], 8)) return { kind: 'audio', mime: 'audio/wav' };
  if (buf.length >= 12 && buf.toString('latin1', 4, 8) === 'ftyp') {
    const brand = buf.toString('latin1', 8, 12);
    const compatible = buf.subarray(16, Math.min(buf.length, Math.max(16, buf.readUInt32BE(0)))).toString('latin1');
    if (/^(avif|avis)$/.test(brand) || (/^(mif1|msf1|miaf)$/.test(brand) && /avi[fs]/.test(compatible))) return { kind: 'image', mime: 'image/avif' };
    // HEVC-coded (a phone's .heic): RenderMediaCache decodes it into a PNG (heif.ts) before an engine sees it.
    if (/^(heic|heix|heim|heis|mif1|msf1|miaf)$/.test(brand)) return { kind: 'image', mime: 'image/heic' };
    if (brand === 'M4A ') return { kind: 'audio', mime: 'audio/mp4' };
    if (brand.startsWith('qt')) return { kind: 'video', mime: 'video/quicktime' };
    return { kind: 'video', mime: 'video/mp4' };
  }
  if (startsWith(buf, [0x1a, 0x45, 0xdf, 0xa3])) return { kind: 'video', mime: 'video/webm' };
  if (startsWith(buf, [0x49, 0x44, 0x33]) || (buf.length > 1 && buf[0] === 0xff && (buf[1] & 0xe0) === 0xe0)) return { kind: 'audio', mime: 'audio/mpeg' };
  if (startsWith(buf, [0x4f, 0x67, 0x67, 0x53])) return { kind: 'audio', mime: 'audio/ogg' };
  if (startsWith(buf, [0x66, 0x4c, 0x61, 0x43])) return { kind: 'audio', mime: 'audio/flac' };
  if (startsWith(buf, [0x00, 0x01, 0x00, 0x00]) || startsWith(buf, [0x74, 0x72, 0x75, 0x65])) return { kind: 'font', mime: 'font/ttf' };
  if (startsWith(buf, [0x4f, 0x54, 0x54, 0x4f])) return { kind: 'font', mime: 'font/otf' };
  if (startsWith(buf, [0x77, 0x4f, 0x46, 0x46])) return { kind: 'font', mime: 'font/woff' };
  if (startsWith(buf, [0x77, 0x4f, 0x46, 0x32])) return { kind: 'font', mime: 'font/woff2' };
  const head = buf.subarray(0, 512).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head)) return { kind: 'svg', mime: 'image/svg+xml' };
  return null;
}

/** The first `n` bytes of the file at `path` (fewer for a shorter file): what the sniffers read. */
export async function readHead(path: string, n: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await handle.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
