import type { Recognition, RecognitionSettings, RecognizedWord, SpeechAudio, SpeechEngine, SpeechEngineOptions, SpeechModel, SpeechSupport } from '../speech.js';
import { AUDIO_FORMATS, canonicalTag, clamp01, languageList, refuseUnsupported, requireKey, VIDEO_FORMATS } from './common.js';
import { SpeechCall, RESULT_ANSWER_BYTES, stringAt, type ErrorReader } from './http.js';

/**
 * speech-alpha: Deepgram's pre-recorded API. One synchronous call, `POST /v1/listen`, with the
 * recording's bytes as the body (streamed from disk) and the settings as query parameters; the
 * answer holds every word with its times.
 *
 * - `auto` is `detect_language=true` (the detected language comes back as `detected_language`);
 *   alternative languages are Deepgram's code-switching, `language=multi`.
 * - Keywords are `keyterm` on Nova-3 models and `keywords` on the older ones (Deepgram takes
 *   each only on its own models), one parameter per word.
 * - `smart_format` stays off: it rewrites numbers and dates, which the punctuation setting does not ask for.
 */
export const DEEPGRAM_BASE_URL = 'https://api.deepgram.com';

/** Deepgram's pre-recorded API takes files up to 2 GB. */
const MAX_BYTES = 2_000_000_000;

/** Nova-3's languages (Deepgram "Models & Languages Overview"); other models take fewer, and Deepgram refuses a pair it lacks. */
const LANGUAGES = [
  'en', 'en-US', 'en-GB', 'en-AU', 'en-IN', 'en-NZ', 'es', 'es-419', 'fr', 'fr-CA', 'de', 'de-CH', 'it', 'pt', 'pt-BR', 'pt-PT',
  'nl', 'nl-BE', 'sv', 'da', 'no', 'fi', 'pl', 'cs', 'sk', 'hu', 'ro', 'bg', 'el', 'ru', 'uk', 'tr', 'hi', 'ja', 'ko', 'zh',
  'zh-TW', 'vi', 'id', 'ms', 'ca', 'et', 'lv', 'lt',
];

const MODELS: SpeechModel[] = [
  { id: 'nova-3', label: 'Nova-3', hint: 'Most accurate general model; meetings, captions, noisy or multi-speaker audio.' },
  { id: 'nova-3-medical', label: 'Nova-3 Medical', hint: 'Nova-3 tuned for medical vocabulary.' },
  { id: 'nova-2', label: 'Nova-2', hint: 'For languages Nova-3 does not have yet.' },
  { id: 'nova-2-meeting', label: 'Nova-2 Meeting', hint: 'Conference rooms with several speakers.' },
  { id: 'nova-2-phonecall', label: 'Nova-2 Phone call', hint: 'Low-bandwidth phone recordings.' },
  { id: 'nova-2-video', label: 'Nova-2 Video', hint: 'Audio taken from videos.' },
  { id: 'enhanced', label: 'Enhanced', hint: 'Older model; keyword boosting with intensifiers.' },
  { id: 'base', label: 'Base', hint: 'Oldest and cheapest model.' },
];

interface DeepgramWord {
  word?: string;
  punctuated_word?: string;
  start?: number;
  end?: number;
  confidence?: number;
  speaker?: number;
}

interface DeepgramAnswer {
  metadata?: { duration?: number };
  results?: {
    channels?: {
      detected_language?: string;
      /** With `language=multi`: the languages heard, most used first. */
      alternatives?: { words?: DeepgramWord[]; languages?: string[] }[];
    }[];
  };
}

/** Deepgram's error bodies: `{err_code, err_msg}` (most endpoints) or `{category, message, details}` (newer ones). */
const readError: ErrorReader = (_status, body) => {
  const message = stringAt(body, 'err_msg') ?? stringAt(body, 'message');
  const details = stringAt(body, 'details');
  return { message: message && details ? `${message} ${details}` : (message ?? details) };
};

export class DeepgramEngine implements SpeechEngine {
  readonly support: SpeechSupport = {
    video: true,
    autoLanguage: true,
    multiLanguage: true,
    diarize: true,
    keywords: true,
    profanityFilter: true,
    maxBytes: MAX_BYTES,
  };
  readonly formats: readonly string[] = [...AUDIO_FORMATS, ...VIDEO_FORMATS];
  readonly languages = languageList(LANGUAGES, true);
  readonly models = MODELS;
  readonly defaultModel = 'nova-3';

  constructor(private readonly options: SpeechEngineOptions) {}

  /** The key's projects (`GET /v1/projects`): the cheapest call that proves the key. */
  async check(signal: AbortSignal): Promise<void> {
    const key = requireKey('speech-alpha', this.options.credentials.apiKey);
    await new SpeechCall('speech-alpha', this.options.baseUrl ?? DEEPGRAM_BASE_URL, this.options, signal, readError).json({ path: '/v1/projects', headers: { authorization: `Token ${key}` } });
  }

  async transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition> {
    refuseUnsupported('speech-alpha', this, audio, settings);
    const key = requireKey('speech-alpha', this.options.credentials.apiKey);
    const call = new SpeechCall('speech-alpha', this.options.baseUrl ?? DEEPGRAM_BASE_URL, this.options, signal, readError);
    const model = settings.model ?? this.defaultModel;
    const answer = await call.json<DeepgramAnswer>({
      method: 'POST',
      path: '/v1/listen',
      query: listenQuery(model, settings),
      headers: { authorization: `Token ${key}`, 'content-type': audio.mime },
      body: { path: audio.path, size: audio.sizeBytes },
      long: true,
      maxResponseBytes: RESULT_ANSWER_BYTES,
    });
    const channel = answer.results?.channels?.[0];
    if (!channel) throw call.failure('unavailable', 'answered without results');
    const best = channel.alternatives?.[0];
    const words: RecognizedWord[] = [];
    for (const w of best?.words ?? []) {
      const text = (settings.punctuation ? w.punctuated_word : undefined) ?? w.word;
      if (!text || !Number.isFinite(w.start) || !Number.isFinite(w.end)) continue;
      words.push({
        word: text,
        start: w.start!,
        end: w.end!,
        confidence: clamp01(w.confidence),
        speaker: settings.diarize && Number.isInteger(w.speaker) ? w.speaker! : null,
      });
    }
    const detected = channel.detected_language ?? best?.languages?.[0];
    return {
      languageCode: detected ? canonicalTag(detected) : settings.languageCode === 'auto' ? 'und' : settings.languageCode,
      model,
      words,
      audioSec: Number.isFinite(answer.metadata?.duration) ? answer.metadata!.duration! : audio.durationSec,
    };
  }
}

/** The settings as Deepgram's query parameters. */
function listenQuery(model: string, settings: RecognitionSettings): URLSearchParams {
  const query = new URLSearchParams({
    model,
    punctuate: String(settings.punctuation),
    diarize: String(settings.diarize),
    profanity_filter: String(settings.filterProfanity),
    smart_format: 'false',
  });
  if (settings.alternativeLanguageCodes.length > 0) query.set('language', 'multi');
  else if (settings.languageCode === 'auto') query.set('detect_language', 'true');
  else query.set('language', settings.languageCode);
  const nova3 = model.startsWith('nova-3');
  // `keywords` reads "word:intensifier"; a colon inside a keyword would be taken for one.
  for (const keyword of settings.keywords) query.append(nova3 ? 'keyterm' : 'keywords', nova3 ? keyword : keyword.replaceAll(':', ' '));
  return query;
}
