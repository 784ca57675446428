import { lottieHeadVerdict } from './lottie.js';
import { isSvgHead } from './svg.js';

/** The media library's asset types (api-spec §2 Asset). */
export type AssetType = 'image' | 'video' | 'audio' | 'font' | 'lottie' | 'svg';

/** How many leading bytes detectAssetType needs at most (fewer for a shorter file). */
export const ASSET_HEAD_BYTES = 65536;

export interface DetectedAsset {
  type: AssetType;
  mimeType: string;
  /** Without the dot: png, jpg, webp, gif, avif, heic, mp4, mov, webm, mp3, wav, ogg, flac, m4a, ttf, otf, woff, woff2, json, svg. */
  ext: string;
}

/** The accepted formats, for the message of a refused upload. */
export const ACCEPTED_ASSET_FORMATS =
  'image (png, jpeg, webp, gif, avif, heic/heif), video (mp4, mov, webm), audio (mp3, wav, ogg, flac, m4a), font (ttf, otf, woff, woff2), lottie (json), svg';

const as = (type: AssetType, mimeType: string, ext: string): DetectedAsset => ({ type, mimeType, ext });
const PNG = as('image', 'image/png', 'png');
const JPEG = as('image', 'image/jpeg', 'jpg');
const GIF = as('image', 'image/gif', 'gif');
const WEBP = as('image', 'image/webp', 'webp');
const AVIF = as('image', 'image/avif', 'avif');
/** HEVC-coded HEIF (a phone's .heic): decoded by heif-convert (heif.ts), the only format sharp's libvips cannot decode here. */
const HEIC = as('image', 'image/heic', 'heic');
const MP4 = as('video', 'video/mp4', 'mp4');
const MOV = as('video', 'video/quicktime', 'mov');
const WEBM = as('video', 'video/webm', 'webm');
const MP3 = as('audio', 'audio/mpeg', 'mp3');
const WAV = as('audio', 'audio/wav', 'wav');
const OGG = as('audio', 'audio/ogg', 'ogg');
const FLAC = as('audio', 'audio/flac', 'flac');
/** Also what an mp4 whose only track is audio becomes at inspection. */
export const M4A_ASSET = as('audio', 'audio/mp4', 'm4a');
const TTF = as('font', 'font/ttf', 'ttf');
const OTF = as('font', 'font/otf', 'otf');
const WOFF = as('font', 'font/woff', 'woff');
const WOFF2 = as('font', 'font/woff2', 'woff2');
const LOTTIE = as('lottie', 'application/json', 'json');
const SVG = as('svg', 'image/svg+xml', 'svg');

const ascii = (buf: Buffer, at: number, length: number) => (buf.length >= at + length ? buf.toString('latin1', at, at + length) : '');

/**
 * The asset type from the leading bytes only (never the file name or the client's Content-Type);
 * null when the bytes are not one of the accepted formats. The verdict is the container's: a file
 * that lies past its header is caught by inspectAsset.
 */
export function detectAssetType(head: Buffer): DetectedAsset | null {
  const magic4 = ascii(head, 0, 4);
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return PNG;
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return JPEG;
  if (/^GIF8[79]a$/.test(ascii(head, 0, 6))) return GIF;
  if (magic4 === 'RIFF' || magic4 === 'RF64') {
    const form = ascii(head, 8, 4);
    if (form === 'WEBP' && magic4 === 'RIFF') return WEBP;
    if (form === 'WAVE') return WAV;
    return null;
  }
  if (ascii(head, 4, 4) === 'ftyp') return isoBmff(head);
  if (magic4 === '\x1aE\xdf\xa3') return ebmlDocType(head) === 'webm' ? WEBM : null;
  if (magic4 === 'OggS') return oggAudio(head) ? OGG : null;
  if (magic4 === 'fLaC') return flacAt(head, 0) ? FLAC : null;
  if (magic4 === 'ID3\x02' || magic4 === 'ID3\x03' || magic4 === 'ID3\x04') return afterId3(head);
  if (mp3FramesAt(head, 0)) return MP3;
  if (magic4 === 'wOFF') return WOFF;
  if (magic4 === 'wOF2') return WOFF2;
  if (magic4 === '\x00\x01\x00\x00' || magic4 === 'true') return sfntDirectory(head) ? TTF : null;
  if (magic4 === 'OTTO') return sfntDirectory(head) ? OTF : null;
  if (isQuickTimeWithoutFtyp(head)) return MOV;
  if (isSvgHead(head)) return SVG;
  if (lottieHeadVerdict(head)) return LOTTIE;
  return null;
}

/** The brands of a HEVC-coded still picture (ISO/IEC 23008-12): heic/heix (8/10-bit), heim/heis (multi-layer, scalable). */
const HEIC_BRANDS = new Set(['heic', 'heix', 'heim', 'heis']);

const MP4_BRANDS = new Set(['isom', 'iso2', 'iso3', 'iso4', 'iso5', 'iso6', 'iso7', 'iso8', 'iso9', 'mp41', 'mp42', 'mp71', 'avc1', 'M4V ', 'M4VH', 'M4VP', 'dash', 'MSNV', 'NDAS', 'mmp4', 'XAVC', 'f4v ']);

/** ISO base media (ftyp box): AVIF, HEIC, M4A/M4B, QuickTime, MP4; other HEIF flavours (image sequences, JPEG-in-HEIF…) and other brands are refused. */
function isoBmff(head: Buffer): DetectedAsset | null {
  const size = head.readUInt32BE(0);
  if (size < 16) return null;
  const major = ascii(head, 8, 4);
  const compatible: string[] = [];
  for (let at = 16; at + 4 <= Math.min(size, head.length); at += 4) compatible.push(ascii(head, at, 4));
  const brands = [major, ...compatible];
  if (major === 'avif' || major === 'avis' || (['mif1', 'msf1', 'miaf'].includes(major) && brands.some((b) => b === 'avif' || b === 'avis'))) return AVIF;
  if (HEIC_BRANDS.has(major) || (['mif1', 'miaf'].includes(major) && compatible.some((b) => HEIC_BRANDS.has(b)))) return HEIC;
  if (major === 'M4A ' || major === 'M4B ') return M4A_ASSET;
  if (major === 'qt  ') return MOV;
  if (/^(mif1|msf1|miaf|heic|heix|hevc|hevx|heim|heis|avci|jpeg|crx |jp2 |M4P )$/.test(major)) return null;
  if (brands.some((b) => MP4_BRANDS.has(b))) return MP4;
  if (compatible.includes('qt  ')) return MOV;
  return null;
}

/** An old QuickTime file starts with its atoms (`wide`, `free`, `mdat`, `moov`…) and has no ftyp. */
function isQuickTimeWithoutFtyp(head: Buffer): boolean {
  let at = 0;
  for (let i = 0; i < 8 && at + 8 <= head.length; i++) {
    const size = head.readUInt32BE(at);
    const type = ascii(head, at + 4, 4);
    if (type === 'moov' || type === 'mdat') return size >= 8 || (type === 'mdat' && size <= 1); // 0: to the end, 1: a 64-bit size
    if (!['wide', 'free', 'skip', 'pnot', 'PICT'].includes(type) || size < 8) return false;
    at += size;
  }
  return false;
}

/** The DocType of an EBML (Matroska/WebM) header; undefined when it cannot be read from the head. */
function ebmlDocType(head: Buffer): string | undefined {
  const size = readVint(head, 4);
  if (!size) return undefined;
  let at = 4 + size.length;
  const end = Math.min(head.length, at + size.value);
  while (at < end) {
    const id = readVint(head, at, true);
    if (!id) return undefined;
    const len = readVint(head, at + id.length);
    if (!len) return undefined;
    const data = at + id.length + len.length;
    if (id.value === 0x4282) return data + len.value <= head.length ? head.toString('latin1', data, data + len.value).replace(/\0+$/, '') : undefined;
    at = data + len.value;
  }
  return undefined;
}

/** An EBML variable-length integer: the marker bit is kept for element ids and dropped for sizes. */
function readVint(buf: Buffer, at: number, keepMarker = false): { value: number; length: number } | undefined {
  if (at >= buf.length) return undefined;
  const first = buf[at]!;
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > buf.length) return undefined;
  let value = keepMarker ? first : first & (0xff >> length);
  for (let i = 1; i < length; i++) value = value * 256 + buf[at + i]!;
  return { value, length };
}

/** Ogg whose first packet is Vorbis, Opus, FLAC or Speex (Theora, a video, is refused). */
function oggAudio(head: Buffer): boolean {
  if (head.length < 28 || head[4] !== 0) return false;
  const packet = 27 + head[26]!;
  const start = head.subarray(packet, packet + 8).toString('latin1');
  return start.startsWith('\x01vorbis') || start === 'OpusHead' || start.startsWith('\x7fFLAC') || start === 'Speex   ';
}

/** `fLaC` followed by its STREAMINFO block (type 0, 34 bytes). */
function flacAt(head: Buffer, at: number): boolean {
  return ascii(head, at, 4) === 'fLaC' && head.length >= at + 8 && (head[at + 4]! & 0x7f) === 0 && head.readUIntBE(at + 5, 3) === 34;
}

/** After an ID3v2 tag: MPEG audio frames (an mp3) or a FLAC stream. A tag longer than the head is trusted. */
function afterId3(head: Buffer): DetectedAsset | null {
  if (head.length < 10) return null;
  const syncsafe = ((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | (head[9]! & 0x7f);
  let at = 10 + syncsafe + (head[5]! & 0x10 ? 10 : 0);
  if (at >= head.length) return MP3;
  while (at < head.length && head[at] === 0) at++;
  if (at >= head.length) return MP3;
  if (flacAt(head, at)) return FLAC;
  return mp3FramesAt(head, at) ? MP3 : null;
}

const MP3_KBPS = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MP3_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** An MPEG-1/2/2.5 Layer III frame header at `at`: its length in bytes, or 0. */
function mp3FrameLength(buf: Buffer, at: number): number {
  if (at + 4 > buf.length || buf[at] !== 0xff || (buf[at + 1]! & 0xe0) !== 0xe0) return 0;
  const version = (buf[at + 1]! >> 3) & 3;
  const layer = (buf[at + 1]! >> 1) & 3;
  const bitrateIndex = buf[at + 2]! >> 4;
  const rateIndex = (buf[at + 2]! >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return 0;
  const kbps = (version === 3 ? MP3_KBPS.v1 : MP3_KBPS.v2)[bitrateIndex]!;
  const rate = MP3_RATES[version]![rateIndex]!;
  const padding = (buf[at + 2]! >> 1) & 1;
  return Math.floor(((version === 3 ? 144 : 72) * kbps * 1000) / rate) + padding;
}

/** A Layer III frame at `at`, and the next one too when the head reaches it (a lone 0xFFFx is common in other data). */
function mp3FramesAt(head: Buffer, at: number): boolean {
  const length = mp3FrameLength(head, at);
  if (!length) return false;
  const next = at + length;
  if (next + 4 > head.length) return true;
  return mp3FrameLength(head, next) > 0 && (head[next + 1]! & 0x1e) === (head[at + 1]! & 0x1e) && (head[next + 2]! & 0x0c) === (head[at + 2]! & 0x0c);
}

/** A plausible sfnt table directory: 1–1024 tables whose tags (as far as the head reaches) are printable. */
function sfntDirectory(head: Buffer): boolean {
  if (head.length < 12) return false;
  const numTables = head.readUInt16BE(4);
  if (numTables < 1 || numTables > 1024) return false;
  for (let i = 0; i < numTables && 12 + 16 * i + 4 <= head.length; i++) {
    if (!/^[\x20-\x7e]{4}$/.test(ascii(head, 12 + 16 * i, 4))) return false;
  }
  return true;
}
