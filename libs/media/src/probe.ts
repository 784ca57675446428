import { runBinary } from './binaries.js';

/** What the renderer needs to know of a media file. */
export interface ProbedMedia {
  /** Seconds; undefined for a still image. */
  duration?: number;
  /** Display size (rotation applied); undefined without a picture. */
  width?: number;
  height?: number;
  hasVideo: boolean;
  hasAudio: boolean;
  /** ffprobe's codec name of the picture (`h264`, `prores`, …), when there is one. */
  videoCodec?: string;
}

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
  disposition?: { attached_pic?: number };
}

/** Reads ffprobe's JSON (`-show_streams -show_format`) into ProbedMedia. */
export function readProbe(json: string): ProbedMedia {
  const data = JSON.parse(json) as { streams?: FfprobeStream[]; format?: { duration?: string } };
  const streams = data.streams ?? [];
  // Cover art in an audio file is a "video" stream too; it is not a picture that plays.
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const durations = [data.format?.duration, video?.duration, audio?.duration].map(Number).filter((d) => Number.isFinite(d) && d > 0);
  const out: ProbedMedia = { hasVideo: video !== undefined, hasAudio: audio !== undefined };
  if (video?.codec_name) out.videoCodec = video.codec_name;
  if (durations.length) out.duration = Math.round(durations[0]! * 1e6) / 1e6;
  if (video?.width && video.height) {
    const rotation = Math.abs(Number(video.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? video.tags?.rotate ?? 0)) % 180;
    const turned = rotation === 90;
    out.width = turned ? video.height : video.width;
    out.height = turned ? video.width : video.height;
  }
  return out;
}

/**
 * Probes a local media file with the ffprobe shipped with Remotion (not getVideoMetadata, which
 * leaves compositor processes behind). Rejects when ffprobe cannot read the file (the exit code is the
 * error's `cause.code`) or takes longer than `timeoutMs`.
 */
export async function probeMedia(file: string, signal?: AbortSignal, timeoutMs = 30_000): Promise<ProbedMedia> {
  const { stdout } = await runBinary('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', file], { timeoutMs, ...(signal ? { signal } : {}) });
  return readProbe(stdout);
}
