import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBinary } from '#libs/media';
import { SpeechProviderError, type Recognition, type RecognitionSettings, type RecognizedWord, type SpeechAudio, type SpeechEngine, type SpeechEngineOptions, type SpeechFailureKind, type SpeechModel, type SpeechSupport } from '../speech.js';
import { canonicalTag, clamp01, languageList, refuseUnsupported, requireKey } from './common.js';
import { SpeechCall, RESULT_ANSWER_BYTES, stringAt, type ErrorReader } from './http.js';

/**
 * speech-gamma: Google Cloud Speech-to-Text v1, long-running recognition with the audio inline:
 * `POST /v1/speech:longrunningrecognize` {config, audio: {content: base64}}, then
 * `GET /v1/operations/{name}` until `done`. Authenticated by an API key (`?key=`) or an OAuth
 * access token (`Authorization: Bearer`).
 *
 * The recording is always re-encoded first with the shipped ffmpeg, to a mono 16 kHz 16-bit WAV
 * (LINEAR16): v1 reads only mono audio unless told the channel count, takes MP3 only in
 * v1p1beta1, reads Ogg only as Opus and then needs the sample rate. Lossless LINEAR16 is one of
 * the two encodings Google recommends (the other, FLAC, the shipped ffmpeg cannot write), 16 kHz
 * its optimal rate, and the WAV header carries the rate, so `sampleRateHertz` is left out. A
 * minute of it is 1.9 MB (2.6 MB in base64).
 *
 * Inline audio has two documented limits (Speech-to-Text "Quotas and limits"): a request of at
 * most 10 MB, and about one minute of audio (longer audio must be a Cloud Storage URI, which a
 * connection made of a key cannot provide). The engine says so: `maxBytes` is the request limit,
 * `maxDurationSec` 60; the re-encoded request is checked against 10 MB again before it is sent.
 */
export const GOOGLE_SPEECH_BASE_URL = 'https://speech.googleapis.com';

/** Google's limit on one request carrying inline audio: 10 MB (10,485,760 bytes). */
const INLINE_REQUEST_BYTES = 10 * 1024 * 1024;
/** Inline audio beyond about a minute is refused ("Inline audio exceeds duration limit. Please use a GCS URI."). */
const INLINE_MAX_SEC = 60;
const DEFAULT_POLL_MS = 3000;
/** ffmpeg's share of the budget for re-encoding at most a minute of audio. */
const TRANSCODE_TIMEOUT_MS = 60_000;
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
    totalBilledTime?: string;
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

export class GoogleSpeechEngine implements SpeechEngine {
  readonly support: SpeechSupport = {
    video: false,
    autoLanguage: false,
    multiLanguage: true,
    diarize: false,
    keywords: false,
    profanityFilter: true,
    maxBytes: INLINE_REQUEST_BYTES,
  };
  readonly formats: readonly string[] = ['mp3', 'wav', 'ogg', 'flac'];
  readonly languages = languageList(LANGUAGES, false);
  readonly models = MODELS;
  readonly defaultModel = 'default';
  readonly maxDurationSec = INLINE_MAX_SEC;

  constructor(private readonly options: SpeechEngineOptions) {}

  async transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition> {
    refuseUnsupported('speech-gamma', this, audio, settings);
    if (settings.alternativeLanguageCodes.length > MAX_ALTERNATIVES) {
      throw new SpeechProviderError('rejected', `speech-gamma takes at most ${MAX_ALTERNATIVES} alternative languages`);
    }
    const { accessToken, apiKey } = this.options.credentials;
    const auth = accessToken ? { headers: { authorization: `Bearer ${accessToken}` } } : { query: { key: requireKey('speech-gamma', apiKey) } };
    const call = new SpeechCall('speech-gamma', this.options.baseUrl ?? GOOGLE_SPEECH_BASE_URL, this.options, signal, readError);
    const withAuth = (query: Record<string, string> = {}) => new URLSearchParams({ ...query, ...auth.query });

    const wav = await toLinear16(call, audio);
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
    const body = Buffer.from(JSON.stringify({ config, audio: { content: wav.toString('base64') } }));
    if (body.length > INLINE_REQUEST_BYTES) {
      throw call.failure('rejected', `takes at most 10 MB of audio inline; this recording re-encoded is ${(body.length / 1024 / 1024).toFixed(1)} MB`);
    }

    let operation = await call.json<Operation>({
      method: 'POST',
      path: '/v1/speech:longrunningrecognize',
      query: withAuth(),
      headers: { ...auth.headers, 'content-type': 'application/json' },
      body,
    });
    const name = operation.name;
    if (!name || !/^[\w.-]+$/.test(name)) throw call.failure('unavailable', 'answered without a usable operation name');
    while (!operation.done) {
      await call.wait(this.options.pollIntervalMs ?? DEFAULT_POLL_MS);
      operation = await call.json<Operation>({ path: `/v1/operations/${name}`, query: withAuth(), headers: auth.headers, maxResponseBytes: RESULT_ANSWER_BYTES });
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
        words.push({ word: w.word, start, end, confidence: clamp01(w.confidence ?? best.confidence), speaker: null });
      }
    }
    return {
      languageCode: language ? canonicalTag(language) : settings.languageCode,
      model: settings.model ?? this.defaultModel,
      words,
      audioSec: seconds(operation.response?.totalBilledTime) ?? audio.durationSec,
    };
  }
}

/** A protobuf Duration in its JSON form ("1.500s") as seconds. */
export function seconds(value: string | undefined): number | undefined {
  const match = value === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(value);
  return match ? Number(match[1]) : undefined;
}

/**
 * The recording as a mono 16 kHz 16-bit WAV, written to a file first so ffmpeg completes the
 * header (the data size), then read back; bounded by the budget and by the inline limit.
 */
async function toLinear16(call: SpeechCall, audio: SpeechAudio): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'speech-gamma-'));
  try {
    const out = join(dir, 'audio.wav');
    const timeoutMs = Math.max(1, Math.min(call.remainingMs(), TRANSCODE_TIMEOUT_MS));
    try {
      await runBinary('ffmpeg', ['-v', 'error', '-nostdin', '-y', '-i', audio.path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-map_metadata', '-1', '-fflags', '+bitexact', '-f', 'wav', out], { signal: call.signal, timeoutMs });
    } catch (err) {
      call.checkAborted();
      const reason = (err as Error).message.split(audio.path).join('the recording');
      throw call.failure('rejected', `could not read the recording's audio: ${reason}`);
    }
    const { size } = await stat(out);
    if (size > INLINE_REQUEST_BYTES) throw call.failure('rejected', 'takes at most 10 MB of audio inline; this recording re-encoded is larger');
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
