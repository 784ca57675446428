import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '#libs/core';
import { MediaFetchError, type MediaFetcher } from './fetch.js';
import { probeMedia } from './probe.js';
import type { MediaKind } from './sniff.js';

export interface DurationSource {
  src: string;
  /** Path of the `src` in the request, for the error (`edit.timeline.tracks[0].clips[1].asset.src`). */
  path: string;
  type: 'video' | 'audio' | 'luma';
}

const EXPECT: Readonly<Record<DurationSource['type'], readonly MediaKind[]>> = {
  video: ['video'],
  audio: ['audio', 'video'],
  luma: ['video', 'image'],
};

/**
 * Durations (seconds) of media files, by `src`: each file fetched once (SSRF rules and size caps of
 * the fetcher), written to a private temporary file, read by the shipped ffprobe, removed. A file
 * that cannot be fetched or has no duration (a luma picture has none, and needs none) → 422
 * MEDIA_UNAVAILABLE naming every offending path, as the worker would, but before anything is
 * queued or held.
 */
export async function probeDurations(
  sources: readonly DurationSource[],
  fetch: MediaFetcher,
  opts: { dir?: string; signal?: AbortSignal } = {},
): Promise<Map<string, number>> {
  const durations = new Map<string, number>();
  if (!sources.length) return durations;
  const errors: Record<string, string[]> = {};
  const fail = (path: string, message: string) => (errors[path] ??= []).push(message);
  const dir = join(opts.dir ?? tmpdir(), `probe-${randomUUID()}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const bySrc = new Map<string, DurationSource[]>();
  for (const s of sources) bySrc.set(s.src, [...(bySrc.get(s.src) ?? []), s]);
  try {
    await Promise.all([...bySrc.entries()].map(async ([src, uses], i) => {
      const expect = [...new Set(uses.flatMap((u) => EXPECT[u.type]))];
      try {
        const media = await fetch(src, expect);
        if (media.kind === 'image') return; // a luma picture: its clip takes the default length
        const file = join(dir, String(i));
        await writeFile(file, media.bytes);
        const probed = await probeMedia(file, opts.signal);
        if (probed.duration === undefined) for (const u of uses) fail(u.path, 'The file has no duration that can be read');
        else durations.set(src, probed.duration);
      } catch (err) {
        if (err instanceof MediaFetchError) for (const u of uses) fail(u.path, err.message);
        else if (/ffprobe failed/.test((err as Error).message)) for (const u of uses) fail(u.path, 'The file could not be read as audio or video');
        else throw err;
      }
    }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (Object.keys(errors).length) {
    throw new ApiError('MEDIA_UNAVAILABLE', `The length of a clip is "auto" but its media could not be measured: ${Object.keys(errors).join(', ')}`, { errors });
  }
  return durations;
}
