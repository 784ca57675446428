import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpeechProviderError, type Recognition, type RecognitionSettings, type RecognizedWord, type SpeechAudio, type SpeechEngine, type SpeechEngineOptions, type SpeechFailureKind, type SpeechModel, type SpeechSupport } from '../speech.js';
import { canonicalTag, clamp01, languageList, refuseUnsupported, requireKey } from './common.js';
import { SpeechCall, RESULT_ANSWER_BYTES, stringAt, type ErrorReader } from './http.js';
import { decodeBudgetMs, decodePcmWav, PCM_RATE } from '../pcm.js';
import { dataChunk, LoudnessMeter, planParts, wavOf, type AudioPart } from './split.js';

/**
 * speech-gamma: Google Cloud Speech-to-Text v1, long-running recognition with the audio inline:
 * `POST /v1/speech:longrunningrecognize` {config, audio: {content: base64}}, then
 * `GET /v1/operations/{name}` until `done`. Authenticated by an API key (`?key=`) or an OAuth
 * access token (`Authorization: Bearer`).
 *
 * The recording is always re-encoded first with the shipped ffmpeg, to mono 16 kHz 16-bit PCM
 * (LINEAR16), sent as WAV: v1 reads only mono audio unless told the channel count, takes MP3 only
 * in v1p1beta1, reads Ogg only as Opus and then needs the sample rate. Lossless LINEAR16 is one of
 * the two encodings Google recommends (the other, FLAC, the shipped ffmpeg cannot write), 16 kHz
 * its optimal rate, and the WAV header carries the rate, so `sampleRateHertz` is left out.
 *
 * Inline audio has two documented limits (Speech-to-Text "Quotas and limits"): a request of at
 * most 10 MB, and about one minute of audio (longer audio must be a Cloud Storage URI, which a
 * connection made of a key cannot provide). So a recording longer than 55 s is cut into parts of
 * at most 55 s (1.76 MB of WAV, 2.35 MB in base64: far under 10 MB), each its own operation:
 * each part ends in the middle of the quietest 200 ms pause of its last 15 s, so that no word is
 * cut in two, or hard at 55 s when nothing there is quiet (./split.ts). The parts run three at a
 * time inside the one deadline of the call; the first part to fail stops the others and fails the
 * whole recording with its kind (no partial transcript); the words come back in order, each
 * part's offset added. `languageCode` is the first language Google heard, `audioSec` the whole
 * recording.
 *
 * Limits: `maxDurationSec` 4 hours (the Captions module's longest recording, runner.ts
 * MAX_AUDIO_SEC); `maxBytes` 200 MB of input, the media library's default upload limit (the input
 * is re-encoded whatever its size: the bound is on the work of reading it). The decoded WAV is
 * kept in a temporary file (115 MB an hour) and read back one part at a time.
 */
export const GOOGLE_SPEECH_BASE_URL = 'https://speech.googleapis.com';

/** Longest recording: the Captions module's own limit (runner.ts MAX_AUDIO_SEC). */
export const GOOGLE_MAX_DURATION_SEC = 4 * 3600;
/** Largest input file: the media library's default upload limit (ASSET_MAX_BYTES, §8), as the offline engine. */
export const GOOGLE_MAX_BYTES = 200 * 1024 * 1024;
/** Longest part sent inline (Google refuses inline audio beyond about a minute), and where its end is looked for. */
const PART_MAX_SEC = 55;
const PART_SEARCH_SEC = 15;
/** Parts recognised at once. */
const PARALLEL_PARTS = 3;
const DEFAULT_POLL_MS = 3000;
/** The decoded samples is read back in pieces of this size to measure its loudness. */
const READ_BYTES = 1024 * 1024;
/** v1 takes the main language and up to three alternatives. */
const MAX_ALTERNATIVES = 3;

/** Common languages of v1 (Speech-to-Text "Language support"). */
const LANGUAGES = [
  'en-US', 'en-GB', 'en-AU', 'en-CA', 'en-IN', 'es-ES', 'es-US', 'es-MX', 'fr-FR', 'fr-CA', 'de-DE', 'it-IT', 'pt-BR', 'pt-PT',
  'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'cs-CZ', 'ro-RO', 'hu-HU', 'el-GR', 'ru-RU', 'uk-UA', 'tr-TR', 'ar-SA',
  'hi-IN', 'ja-JP', 'ko-KR', 'cmn-Hans-CN', 'cmn-Hant-TW', 'yue-Hant-HK', 'id-ID', 'ms-MY', 'th-TH', 'vi-VN', 'fil-PH',
];

const MODELS: SpeechModel[] = [
  { id: 'default', label: 'Default', hint: 'Long-form audio that fits no other model; high-fidelity, 16 kHz or more.' },
  { id: 'latest_long', label: 'Latest long', hint: 'Newest model for long content such as media and conversations.' },
  { id: 'latest_short', label: 'Latest short', hint: 'Newest model for short utterances of a few seconds.' },
  { id: 'video', label: 'Video', hint: 'Audio from videos or with several speakers (premium model).' },
  { id: 'phone_call', label: 'Phone call', hint: 'Phone recordings, typically 8 kHz.' },
  { id: 'command_and_search', label: 'Command and search', hint: 'Short voice commands and searches.' },
];

/** Error reasons (google.rpc.ErrorInfo) that mean the connection's credentials or project need fixing. */
const AUTH_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED', 'API_KEY_HTTP_REFERRER_BLOCKED', 'API_KEY_IP_ADDRESS_BLOCKED', 'ACCESS_TOKEN_EXPIRED', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'SERVICE_DISABLED', 'BILLING_DISABLED', 'CONSUMER_INVALID']);
const AUTH_STATUSES = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED']);
const TRANSIENT_STATUSES = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'INTERNAL', 'ABORTED']);
/** google.rpc.Code numbers of an operation's error. */
const CODE_STATUS: Record<number, string> = { 1: 'CANCELLED', 2: 'UNKNOWN', 3: 'INVALID_ARGUMENT', 4: 'DEADLINE_EXCEEDED', 5: 'NOT_FOUND', 7: 'PERMISSION_DENIED', 8: 'RESOURCE_EXHAUSTED', 9: 'FAILED_PRECONDITION', 10: 'ABORTED', 11: 'OUT_OF_RANGE', 12: 'UNIMPLEMENTED', 13: 'INTERNAL', 14: 'UNAVAILABLE', 16: 'UNAUTHENTICATED' };

interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: { reason?: string }[];
}

interface Operation {
  name?: string;
  done?: boolean;
  error?: GoogleStatus;
  response?: {
    results?: {
      alternatives?: { confidence?: number; words?: { word?: string; startTime?: string; endTime?: string; confidence?: number }[] }[];
      languageCode?: string;
    }[];
  };
}

/** What a Google status means for the connection: its status name and error reasons decide before the HTTP code. */
function kindOfGoogle(error: GoogleStatus): SpeechFailureKind | undefined {
  const status = error.status ?? (error.code !== undefined ? CODE_STATUS[error.code] : undefined);
  if ((status && AUTH_STATUSES.has(status)) || error.details?.some((d) => d.reason && AUTH_REASONS.has(d.reason)) || /API key not valid/i.test(error.message ?? '')) return 'auth';
  if (status && TRANSIENT_STATUSES.has(status)) return 'unavailable';
  return undefined;
}

/** Google's error bodies: `{"error": {code, message, status, details}}` (sometimes inside a one-element array). */
const readError: ErrorReader = (_status, body) => {
  const error = (Array.isArray(body) ? (body[0] as { error?: GoogleStatus } | undefined)?.error : (body as { error?: GoogleStatus } | undefined)?.error) ?? {};
  return { message: stringAt(error, 'message'), kind: kindOfGoogle(error) };
};

/** How a connection authenticates its calls: an access token in a header, or an API key in the query. */
interface GoogleAuth {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** What one part gave: its words (times from the start of the recording) and the language Google heard. */
interface PartResult {
  words: RecognizedWord[];
  language: string | undefined;
}

export class GoogleSpeechEngine implements SpeechEngine {
  readonly support: SpeechSupport = {
    video: false,
    autoLanguage: false,
    multiLanguage: true,
    diarize: false,
    keywords: false,
    profanityFilter: true,
    maxBytes: GOOGLE_MAX_BYTES,
  };
  readonly formats: readonly string[] = ['mp3', 'wav', 'ogg', 'flac'];
  readonly languages = languageList(LANGUAGES, false);
  readonly models = MODELS;
  readonly defaultModel = 'default';
  readonly maxDurationSec = GOOGLE_MAX_DURATION_SEC;

  constructor(private readonly options: SpeechEngineOptions) {}

  /** One page of operations (`GET /v1/operations?pageSize=1`): the cheapest call that proves the key or token. */
  async check(signal: AbortSignal): Promise<void> {
    const { accessToken, apiKey } = this.options.credentials;
    const query = new URLSearchParams({ pageSize: '1', ...(accessToken ? {} : { key: requireKey('speech-gamma', apiKey) }) });
    const headers = accessToken ? { authorization: `Bearer ${accessToken}` } : undefined;
    await new SpeechCall('speech-gamma', this.options.baseUrl ?? GOOGLE_SPEECH_BASE_URL, this.options, signal, readError).json({ path: '/v1/operations', query, ...(headers ? { headers } : {}) });
  }

  async transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition> {
    refuseUnsupported('speech-gamma', this, audio, settings);
    if (settings.alternativeLanguageCodes.length > MAX_ALTERNATIVES) {
      throw new SpeechProviderError('rejected', `speech-gamma takes at most ${MAX_ALTERNATIVES} alternative languages`);
    }
    const { accessToken, apiKey } = this.options.credentials;
    const auth: GoogleAuth = accessToken ? { headers: { authorization: `Bearer ${accessToken}` } } : { query: { key: requireKey('speech-gamma', apiKey) } };
    // The first part to fail stops the others through `stop`; the caller's signal stops them all.
    const stop = new AbortController();
    const call = new SpeechCall('speech-gamma', this.options.baseUrl ?? GOOGLE_SPEECH_BASE_URL, this.options, AbortSignal.any([signal, stop.signal]), readError);
    const config: Record<string, unknown> = {
      encoding: 'LINEAR16',
      languageCode: settings.languageCode,
      enableWordTimeOffsets: true,
      enableWordConfidence: true,
      enableAutomaticPunctuation: settings.punctuation,
      profanityFilter: settings.filterProfanity,
    };
    if (settings.alternativeLanguageCodes.length > 0) config.alternativeLanguageCodes = settings.alternativeLanguageCodes;
    if (settings.model) config.model = settings.model;

    const dir = await mkdtemp(join(tmpdir(), 'speech-gamma-'));
    try {
      const wavPath = join(dir, 'audio.wav');
      await this.decode(call, audio, wavPath);
      const file = await open(wavPath, 'r');
      try {
        const pcm = await samplesOf(call, file);
        const { loudness, samples } = await measure(call, pcm);
        if (samples > this.maxDurationSec * PCM_RATE) throw call.failure('rejected', `reads recordings up to ${this.maxDurationSec / 3600} hours; this one is longer`);
        const parts = planParts(loudness, samples, { maxSamples: PART_MAX_SEC * PCM_RATE, searchSamples: PART_SEARCH_SEC * PCM_RATE });
        const results = await allBounded(parts, PARALLEL_PARTS, stop, async (part) => this.recognise(call, auth, config, await readPart(pcm, part), part.start / PCM_RATE));
        const language = results.find((r) => r.language)?.language;
        return {
          languageCode: language ? canonicalTag(language) : settings.languageCode,
          model: settings.model ?? this.defaultModel,
          words: results.flatMap((r) => r.words),
          audioSec: round3(samples / PCM_RATE),
        };
      } finally {
        await file.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The recording's first audio track as a mono 16 kHz 16-bit WAV at `out`, bounded by the budget and one second past the longest recording. */
  private async decode(call: SpeechCall, audio: SpeechAudio, out: string): Promise<void> {
    const limitSec = this.maxDurationSec + 1;
    const timeoutMs = Math.max(1, Math.min(call.remainingMs(), decodeBudgetMs(audio.durationSec, limitSec)));
    try {
      await decodePcmWav(audio.path, out, { limitSec, signal: call.signal, timeoutMs });
    } catch (err) {
      call.checkAborted();
      if (call.remainingMs() <= 0) throw call.timedOut();
      const reason = (err as Error).message.split(audio.path).join('the recording').split(out).join('its audio');
      throw call.failure('rejected', `could not read the recording's audio: ${reason}`);
    }
  }

  /** One part, as its own long-running operation; its words' times moved by `offsetSec`. */
  private async recognise(call: SpeechCall, auth: GoogleAuth, config: Record<string, unknown>, wav: Buffer, offsetSec: number): Promise<PartResult> {
    const query = () => new URLSearchParams(auth.query);
    let operation = await call.json<Operation>({
      method: 'POST',
      path: '/v1/speech:longrunningrecognize',
      query: query(),
      headers: { ...auth.headers, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ config, audio: { content: wav.toString('base64') } })),
    });
    const name = operation.name;
    if (!name || !/^[\w.-]+$/.test(name)) throw call.failure('unavailable', 'answered without a usable operation name');
    while (!operation.done) {
      await call.wait(this.options.pollIntervalMs ?? DEFAULT_POLL_MS);
      operation = await call.json<Operation>({ path: `/v1/operations/${name}`, query: query(), headers: auth.headers, maxResponseBytes: RESULT_ANSWER_BYTES });
    }
    if (operation.error) {
      throw call.failure(kindOfGoogle(operation.error) ?? 'rejected', `could not transcribe the recording: ${operation.error.message ?? operation.error.status ?? 'no reason given'}`);
    }

    const words: RecognizedWord[] = [];
    let language: string | undefined;
    for (const result of operation.response?.results ?? []) {
      const best = result.alternatives?.[0];
      if (!best) continue;
      language ??= result.languageCode;
      for (const w of best.words ?? []) {
        const start = seconds(w.startTime);
        const end = seconds(w.endTime);
        if (!w.word || start === undefined || end === undefined) continue;
        words.push({ word: w.word, start: round3(start + offsetSec), end: round3(end + offsetSec), confidence: clamp01(w.confidence ?? best.confidence), speaker: null });
      }
    }
    return { words, language };
  }
}

/** A protobuf Duration in its JSON form ("1.500s") as seconds. */
export function seconds(value: string | undefined): number | undefined {
  const match = value === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(value);
  return match ? Number(match[1]) : undefined;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** The samples of a decoded WAV: where they start in its file and how many bytes they fill. */
interface Pcm {
  file: FileHandle;
  offset: number;
  bytes: number;
}

async function samplesOf(call: SpeechCall, file: FileHandle): Promise<Pcm> {
  const head = Buffer.alloc(4096);
  const { bytesRead } = await file.read(head, 0, head.length, 0);
  const data = dataChunk(head.subarray(0, bytesRead));
  if (!data) throw call.failure('rejected', "could not read the recording's audio: the decoded audio has no samples");
  const { size } = await file.stat();
  return { file, offset: data.offset, bytes: Math.min(data.size, size - data.offset) & ~1 };
}

/** The loudness of every 25 ms of the samples, and how many there are. */
async function measure(call: SpeechCall, pcm: Pcm): Promise<{ loudness: Float32Array; samples: number }> {
  const meter = new LoudnessMeter();
  // Its own ArrayBuffer (offset 0), so the bytes read can be viewed as 16-bit samples.
  const buffer = Buffer.alloc(READ_BYTES);
  for (let done = 0; done < pcm.bytes;) {
    call.checkAborted();
    const { bytesRead } = await pcm.file.read(buffer, 0, Math.min(READ_BYTES, pcm.bytes - done), pcm.offset + done);
    const whole = bytesRead & ~1;
    if (whole === 0) break;
    meter.push(new Int16Array(buffer.buffer, buffer.byteOffset, whole / 2));
    done += whole;
  }
  return { loudness: meter.frames(), samples: meter.samples };
}

/** One part of the samples as a WAV. */
async function readPart(pcm: Pcm, part: AudioPart): Promise<Buffer> {
  const bytes = Buffer.alloc((part.end - part.start) * 2);
  const { bytesRead } = await pcm.file.read(bytes, 0, bytes.length, pcm.offset + part.start * 2);
  return wavOf(bytes.subarray(0, bytesRead));
}

/**
 * `work` on every item, at most `limit` at once, the results in the items' order. The first
 * failure aborts `stop` (so the items under way end at once), starts no other item, and is what
 * the whole rejects with.
 */
async function allBounded<T, R>(items: readonly T[], limit: number, stop: AbortController, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!);
      } catch (error) {
        if (!failed) {
          failed = { error };
          stop.abort(error);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.error;
  return results;
}
