import type { AppConfig } from '#libs/core';
import { fetchMedia, MediaFetchError, type FetchLimits, type MediaFetcher } from './fetch.js';
import { sniff } from './sniff.js';
import { StoredFileNotFoundError, type StorageDriver } from '#libs/storage';

/**
 * The engine's media source in a deployment: our own stored files (`<PUBLIC_URL>/files/…`: library
 * media, uploads, earlier outputs) are read from storage without a network round trip; anything else
 * is downloaded with the SSRF rules of the environment (production: public addresses only).
 */
export function storageAwareFetcher(config: Pick<AppConfig, 'env'>, storage: StorageDriver, limits: Partial<FetchLimits> = {}): MediaFetcher {
  const policy = config.env === 'production' ? 'production' : 'development';
  return async (url, expect) => {
    const key = storage.keyFromUrl(url);
    if (key === undefined) return fetchMedia(url, expect ? { policy, expect, limits } : { policy, limits });
    const bytes = await readStored(storage, key, url);
    const type = sniff(bytes);
    if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
    if (expect && !expect.includes(type.kind)) throw new MediaFetchError(url, `Expected ${expect.join(' or ')}, got ${type.mime}`);
    return { url, bytes, ...type };
  };
}

/** The bytes of one of our stored files, named by its URL; a missing file is a MediaFetchError. */
export async function readStored(storage: Pick<StorageDriver, 'read'>, key: string, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await storage.read(key)) chunks.push(chunk as Buffer);
  } catch (err) {
    if (err instanceof StoredFileNotFoundError) throw new MediaFetchError(url, 'No stored file at this URL');
    throw err;
  }
  return Buffer.concat(chunks);
}
