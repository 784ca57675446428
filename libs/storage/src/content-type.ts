/** Content types by file extension; anything else is served as application/octet-stream. */
const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  heic: 'image/heic',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  vtt: 'text/vtt; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff: 'font/woff',
  woff2: 'font/woff2',
  zip: 'application/zip',
};

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** The Content-Type a stored file is served with, from its key's extension. */
export function contentTypeFor(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return DEFAULT_CONTENT_TYPE;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? DEFAULT_CONTENT_TYPE;
}

/** `text/vtt; charset=utf-8` → `text/vtt`. */
export function mediaTypeEssence(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/** The type `key` is served with; refuses a `requested` type that contradicts it (before anything is written). */
export function servedContentType(key: string, requested?: string): string {
  const served = contentTypeFor(key);
  if (requested && mediaTypeEssence(requested) !== mediaTypeEssence(served)) {
    throw new Error(`Key "${key}" would be served as ${served}, not ${requested}: give it the matching extension`);
  }
  return served;
}
