import { type AppConfig } from '#libs/core';
import { OutboundError, OutboundRefused, requestPinned, resolveOutbound } from '#libs/outbound';
import { MediaFetchError, readStored } from '#libs/media';
import type { StorageDriver } from '#libs/storage';

/** Downloads a text file (SRT/VTT captions), or throws MediaFetchError. */
export type TextFetcher = (url: string) => Promise<string>;

const MAX_TEXT_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 20_000;
const MAX_REDIRECTS = 3;

/**
 * Caption files are text, which the media fetcher (it types files by their bytes) refuses: this
 * downloads them with the same rules: SSRF-checked on every redirect hop, pinned connections, a
 * 2 MB cap and a 20 s deadline. Our own stored files are read from storage.
 */
export function storageAwareTextFetcher(config: Pick<AppConfig, 'env'>, storage?: StorageDriver): TextFetcher {
  const policy = config.env === 'production' ? 'production' : 'development';
  return async (url) => {
    const key = storage?.keyFromUrl(url);
    if (storage && key !== undefined) return decodeText(url, await readStored(storage, key, url));
    const deadline = Date.now() + TIMEOUT_MS;
    let current = url;
    for (let hop = 0; ; hop++) {
      let target;
      try {
        target = await resolveOutbound(current, policy);
      } catch (err) {
        throw new MediaFetchError(url, err instanceof OutboundRefused ? `Refused: ${err.message}` : String(err));
      }
      let res;
      try {
        res = await requestPinned({ target, headers: { 'user-agent': 'media-render/1.0', accept: 'text/vtt, application/x-subrip, text/plain, */*' }, timeoutMs: Math.max(1, deadline - Date.now()), maxResponseBytes: MAX_TEXT_BYTES + 1 });
      } catch (err) {
        throw new MediaFetchError(url, err instanceof OutboundError && err.kind === 'timeout' ? `Download took longer than ${TIMEOUT_MS} ms` : `Download failed: ${(err as Error).message}`);
      }
      if (res.status >= 300 && res.status < 400 && res.headers.location) {
        if (hop >= MAX_REDIRECTS) throw new MediaFetchError(url, `More than ${MAX_REDIRECTS} redirects`);
        current = new URL(res.headers.location, target.url).toString();
        continue;
      }
      if (res.status !== 200) throw new MediaFetchError(url, `The server answered ${res.status}`);
      if (res.truncated || res.body.length > MAX_TEXT_BYTES) throw new MediaFetchError(url, `The file is larger than ${MAX_TEXT_BYTES / 1024 / 1024} MB`);
      return decodeText(url, res.body);
    }
  };
}

function decodeText(url: string, bytes: Buffer): string {
  if (bytes.includes(0)) throw new MediaFetchError(url, 'The file is not text (SRT or WebVTT captions were expected)');
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}
