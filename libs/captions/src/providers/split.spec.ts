import { inspectInline } from '#testing/captions';
import { PCM_RATE } from '../pcm.js';
import { dataChunk, FRAME_SAMPLES, LoudnessMeter, planParts, wavOf } from './split.js';

const LIMITS = { maxSamples: 55 * PCM_RATE, searchSamples: 15 * PCM_RATE };
const FRAMES_PER_SEC = PCM_RATE / FRAME_SAMPLES;

/** Frame loudness of `seconds` of speech at RMS 0.1, with the given stretches at other levels. */
function loudness(seconds: number, quiet: { from: number; to: number; level?: number }[] = []): Float32Array {
  const frames = new Float32Array(seconds * FRAMES_PER_SEC).fill(0.1);
  for (const { from, to, level = 0 } of quiet) frames.fill(level, Math.round(from * FRAMES_PER_SEC), Math.round(to * FRAMES_PER_SEC));
  return frames;
}

const inSeconds = (parts: { start: number; end: number }[]) => parts.map((p) => [p.start / PCM_RATE, p.end / PCM_RATE]);

describe('cutting a long recording into parts (speech-gamma)', () => {
  it('keeps a recording of up to 55 s whole, and an empty one has no part', () => {
    expect(inSeconds(planParts(loudness(55), 55 * PCM_RATE, LIMITS))).toEqual([[0, 55]]);
    expect(inSeconds(planParts(loudness(3), 3 * PCM_RATE, LIMITS))).toEqual([[0, 3]]);
    expect(planParts(new Float32Array(0), 0, LIMITS)).toEqual([]);
  });

  it('ends each part in the middle of the quietest pause of its last 15 s', () => {
    // First part: pauses at 30 s (before its last 15 s), 44 s (faint noise) and 50 s (silence).
    // Second (from 50.2 s): silence at 92 s, faint noise at 100 s. Third (from 92.3 s): none.
    const frames = loudness(150, [
      { from: 30, to: 31 },
      { from: 44, to: 45, level: 0.002 },
      { from: 50, to: 50.4 },
      { from: 92, to: 92.6 },
      { from: 100, to: 101, level: 0.003 },
    ]);
    expect(inSeconds(planParts(frames, 150 * PCM_RATE, LIMITS))).toEqual([[0, 50.2], [50.2, 92.3], [92.3, 147.3], [147.3, 150]]);
  });

  it('takes the latest of equally quiet pauses, so that there are fewer parts', () => {
    const frames = loudness(100, [{ from: 41, to: 42 }, { from: 53, to: 53.5 }]);
    expect(inSeconds(planParts(frames, 100 * PCM_RATE, LIMITS))[0]).toEqual([0, 53.25]);
  });

  it('cuts a pause with background noise (levels that vary a little) in its middle', () => {
    const frames = loudness(70, [{ from: 46, to: 47 }]);
    for (let f = 46 * FRAMES_PER_SEC; f < 47 * FRAMES_PER_SEC; f++) frames[f] = f % 3 ? 0.002 : 0.0027;
    expect(inSeconds(planParts(frames, 70 * PCM_RATE, LIMITS))[0]).toEqual([0, 46.5]);
  });

  it('cuts hard at 55 s when nothing is quiet: no pause, a dip shorter than 200 ms, or one not 26 dB down', () => {
    expect(inSeconds(planParts(loudness(130), 130 * PCM_RATE, LIMITS))).toEqual([[0, 55], [55, 110], [110, 130]]);
    const dip = loudness(70, [{ from: 50, to: 50.15 }]);
    expect(inSeconds(planParts(dip, 70 * PCM_RATE, LIMITS))[0]).toEqual([0, 55]);
    const shallow = loudness(70, [{ from: 50, to: 51, level: 0.01 }]);
    expect(inSeconds(planParts(shallow, 70 * PCM_RATE, LIMITS))[0]).toEqual([0, 55]);
    // Quiet relative to a loud part, though above −50 dBFS.
    const loud = loudness(70, [{ from: 0, to: 70, level: 0.5 }, { from: 50, to: 51, level: 0.02 }]);
    expect(inSeconds(planParts(loud, 70 * PCM_RATE, LIMITS))[0]).toEqual([0, 50.5]);
  });

  it('measures RMS per 25 ms frame whatever the chunks, the last frame over what it has', () => {
    const samples = Int16Array.from({ length: 1000 }, (_, i) => (i < 400 ? 16384 : i < 800 ? 0 : (i % 2 ? 8192 : -8192)));
    const whole = new LoudnessMeter();
    whole.push(samples);
    const pieces = new LoudnessMeter();
    for (let at = 0; at < samples.length; at += 333) pieces.push(samples.subarray(at, at + 333));
    expect(Array.from(whole.frames())).toEqual([0.5, 0, 0.25]);
    expect(Array.from(pieces.frames())).toEqual([0.5, 0, 0.25]);
    expect(whole.samples).toBe(1000);
  });

  it('wraps PCM in the WAV header that describes it, and finds the samples of a WAV past other chunks', () => {
    const wav = wavOf(Buffer.alloc(PCM_RATE * 2 * 3));
    expect(inspectInline(wav)).toEqual({ bytes: 44 + PCM_RATE * 6, container: 'wav', channels: 1, sampleRate: 16000, durationSec: 3 });
    expect(dataChunk(wav)).toEqual({ offset: 44, size: PCM_RATE * 6 });
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('INFOx\0')]);
    const withList = Buffer.concat([wav.subarray(0, 36), list, wav.subarray(36)]);
    expect(dataChunk(withList)).toEqual({ offset: 44 + list.length, size: PCM_RATE * 6 });
    expect(dataChunk(Buffer.from('not a wav at all'))).toBeNull();
  });
});
