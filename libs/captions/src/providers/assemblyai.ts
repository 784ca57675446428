import type { Recognition, RecognitionSettings, RecognizedWord, SpeechAudio, SpeechEngine, SpeechEngineOptions, SpeechModel, SpeechSupport } from '../speech.js';
import { AUDIO_FORMATS, canonicalTag, clamp01, languageList, refuseUnsupported, requireKey, VIDEO_FORMATS } from './common.js';
import { SpeechCall, RESULT_ANSWER_BYTES, stringAt, type ErrorReader } from './http.js';

/**
 * speech-beta: AssemblyAI's v2 API. The recording is uploaded (`POST /v2/upload`, its bytes
 * streamed from disk), a transcript is created on the upload's URL (`POST /v2/transcript`), and
 * polled (`GET /v2/transcript/{id}`) until it is `completed` or `error`. Word times come in
 * milliseconds, speakers as letters (A, B, …): both are converted (seconds, 0, 1, …).
 *
 * Without a model, `speech_models` is AssemblyAI's documented default route: Universal-3 Pro
 * for its six languages, Universal-2 for the others (`speech_model_used` says which ran).
 */
export const ASSEMBLYAI_BASE_URL = 'https://api.assemblyai.com';

/** AssemblyAI's limit for a local file sent to /v2/upload: 2.2 GB. */
const MAX_BYTES = 2_200_000_000;
const DEFAULT_POLL_MS = 3000;
const DEFAULT_ROUTE = ['universal-3-pro', 'universal-2'];

/** A common part of Universal-2's 99 languages (AssemblyAI "Supported languages"); English also in three accents. */
const LANGUAGES = [
  'en', 'en-US', 'en-GB', 'en-AU', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'hi', 'ja', 'zh', 'fi', 'ko', 'pl', 'ru', 'tr', 'uk',
  'vi', 'ar', 'bg', 'ca', 'cs', 'da', 'el', 'he', 'hr', 'hu', 'id', 'ms', 'no', 'ro', 'sk', 'sv', 'ta', 'th', 'ur',
];

const MODELS: SpeechModel[] = [
  { id: 'universal-3-pro', label: 'Universal-3 Pro', hint: 'Most accurate; English, Spanish, German, French, Portuguese and Italian only.' },
  { id: 'universal-2', label: 'Universal-2', hint: 'Fast and accurate across 99 languages.' },
];

/** English accents AssemblyAI names its own way; other languages are plain ISO 639-1 codes. */
const ACCENTS: Record<string, string> = { 'en-us': 'en_us', 'en-gb': 'en_uk', 'en-au': 'en_au' };
const FROM_ACCENT = Object.fromEntries(Object.entries(ACCENTS).map(([tag, code]) => [code, canonicalTag(tag)]));

interface Transcript {
  id?: string;
  status?: 'queued' | 'processing' | 'completed' | 'error';
  error?: string;
  words?: { text?: string; start?: number; end?: number; confidence?: number; speaker?: string | null }[];
  audio_duration?: number;
  language_code?: string;
  speech_model_used?: string;
}

/** AssemblyAI's error bodies: `{"error": "…"}`. */
const readError: ErrorReader = (_status, body) => ({ message: stringAt(body, 'error') });

export class AssemblyAiEngine implements SpeechEngine {
  readonly support: SpeechSupport = {
    video: true,
    autoLanguage: true,
    multiLanguage: false,
    diarize: true,
    keywords: false,
    profanityFilter: false,
    maxBytes: MAX_BYTES,
  };
  readonly formats: readonly string[] = [...AUDIO_FORMATS, ...VIDEO_FORMATS];
  readonly languages = languageList(LANGUAGES, true);
  readonly models = MODELS;
  readonly defaultModel = DEFAULT_ROUTE[0]!;

  constructor(private readonly options: SpeechEngineOptions) {}

  /** One page of one transcript (`GET /v2/transcript?limit=1`): the cheapest call that proves the key. */
  async check(signal: AbortSignal): Promise<void> {
    const key = requireKey('speech-beta', this.options.credentials.apiKey);
    await new SpeechCall('speech-beta', this.options.baseUrl ?? ASSEMBLYAI_BASE_URL, this.options, signal, readError).json({ path: '/v2/transcript', query: new URLSearchParams({ limit: '1' }), headers: { authorization: key } });
  }

  async transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition> {
    refuseUnsupported('speech-beta', this, audio, settings);
    const key = requireKey('speech-beta', this.options.credentials.apiKey);
    const call = new SpeechCall('speech-beta', this.options.baseUrl ?? ASSEMBLYAI_BASE_URL, this.options, signal, readError);
    const auth = { authorization: key };

    const upload = await call.json<{ upload_url?: string }>({
      method: 'POST',
      path: '/v2/upload',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: { path: audio.path, size: audio.sizeBytes },
      long: true,
    });
    if (!upload.upload_url) throw call.failure('unavailable', 'answered the upload without an upload_url');

    const request: Record<string, unknown> = {
      audio_url: upload.upload_url,
      speech_models: settings.model ? [settings.model] : DEFAULT_ROUTE,
      punctuate: settings.punctuation,
      format_text: settings.punctuation,
      speaker_labels: settings.diarize,
    };
    if (settings.languageCode === 'auto') request.language_detection = true;
    else request.language_code = toAssemblyAi(settings.languageCode);
    let transcript = await call.json<Transcript>({
      method: 'POST',
      path: '/v2/transcript',
      headers: { ...auth, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(request)),
    });
    const id = transcript.id;
    if (!id) throw call.failure('unavailable', 'answered the transcript request without an id');

    while (transcript.status !== 'completed') {
      if (transcript.status === 'error') throw call.failure('rejected', `could not transcribe the recording: ${transcript.error ?? 'no reason given'}`);
      await call.wait(this.options.pollIntervalMs ?? DEFAULT_POLL_MS);
      transcript = await call.json<Transcript>({ path: `/v2/transcript/${encodeURIComponent(id)}`, headers: auth, maxResponseBytes: RESULT_ANSWER_BYTES });
    }

    const words: RecognizedWord[] = [];
    for (const w of transcript.words ?? []) {
      if (!w.text || !Number.isFinite(w.start) || !Number.isFinite(w.end)) continue;
      words.push({
        word: w.text,
        start: w.start! / 1000,
        end: w.end! / 1000,
        confidence: clamp01(w.confidence),
        speaker: settings.diarize ? speakerNumber(w.speaker) : null,
      });
    }
    const language = transcript.language_code;
    return {
      languageCode: language ? (FROM_ACCENT[language] ?? canonicalTag(language)) : settings.languageCode === 'auto' ? 'und' : settings.languageCode,
      model: transcript.speech_model_used ?? settings.model ?? this.defaultModel,
      words,
      audioSec: Number.isFinite(transcript.audio_duration) ? transcript.audio_duration! : audio.durationSec,
    };
  }
}

/** A BCP-47 tag as AssemblyAI's language code: English accents by name, other languages by their primary subtag (es-ES → es). */
export function toAssemblyAi(tag: string): string {
  const lower = tag.toLowerCase();
  return ACCENTS[lower] ?? lower.split('-')[0]!;
}

/** AssemblyAI's speaker letters as numbers from 0: A → 0, B → 1, …, Z → 25, AA → 26. */
export function speakerNumber(label: string | null | undefined): number | null {
  if (!label || !/^[A-Z]+$/.test(label)) return null;
  let n = 0;
  for (const c of label) n = n * 26 + (c.charCodeAt(0) - 64);
  return n - 1;
}
