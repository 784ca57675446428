import { parseJson, ProviderCall, stringAt, type ErrorReader, type ProviderAnswer } from '#libs/integrations';
import { MAX_AUDIO_BYTES, VoiceRejected, type CharacterAllowance, type SpeechRequest, type Voice, type VoiceEngine, type VoiceEngineOptions, type VoiceModel } from './voice.js';

/**
 * voice-provider: ElevenLabs' API (`xi-api-key` header). `GET /v1/voices`, `GET /v1/models` (the
 * text-to-speech ones), `GET /v1/user/subscription` (the character allowance) and
 * `POST /v1/text-to-speech/{voice_id}?output_format=mp3_44100_128` with `{text, model_id,
 * voice_settings: {stability, similarity_boost, style}}`, answering audio/mpeg.
 *
 * Model ids: ours are ElevenLabs' without their `eleven_` prefix (`multilingual_v2` is
 * `eleven_multilingual_v2`, `turbo_v2_5` is `eleven_turbo_v2_5`); either spelling is taken.
 */
export const ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';
export const ELEVENLABS_DEFAULT_MODEL = 'multilingual_v2';
const OUTPUT_FORMAT = 'mp3_44100_128';
/** The voice-over's whole budget: ElevenLabs says 5,000 characters in well under a minute. */
export const VOICE_TIMEOUT_MS = 120_000;

/** Our model id → ElevenLabs' (`multilingual_v2` → `eleven_multilingual_v2`). */
export function elevenLabsModelId(id: string): string {
  return id.startsWith('eleven_') ? id : `eleven_${id}`;
}

/** ElevenLabs' model id → ours. */
export function houseModelId(id: string): string {
  return id.replace(/^eleven_/, '');
}

interface ElevenVoice {
  voice_id?: string;
  name?: string;
  category?: string;
  preview_url?: string | null;
  labels?: Record<string, unknown> | null;
}

interface ElevenModel {
  model_id?: string;
  name?: string;
  can_do_text_to_speech?: boolean;
  languages?: { language_id?: string; name?: string }[];
  max_characters_request_free_user?: number;
  max_characters_request_subscribed_user?: number;
}

interface ElevenSubscription {
  tier?: string;
  character_count?: number;
  character_limit?: number;
  next_character_count_reset_unix?: number | null;
}

/**
 * ElevenLabs' error bodies: `{"detail": {"status": "invalid_api_key", "message": "…"}}`, or FastAPI's
 * validation list `{"detail": [{"loc": ["body", "text"], "msg": "…"}]}`.
 */
const readError: ErrorReader = (_status, body) => {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return { message: detail };
  if (Array.isArray(detail)) return { message: detail.map((d) => stringAt(d, 'msg')).filter(Boolean).join('; ') };
  const status = stringAt(detail, 'status');
  const message = stringAt(detail, 'message');
  // A used-up character allowance also answers 401: it refuses this script, not the key.
  if (status === 'quota_exceeded') return { message, kind: 'rejected' };
  return { message: message ?? status, ...(status === 'invalid_api_key' || status === 'missing_permissions' ? { kind: 'auth' as const } : {}) };
};

/** The request field a refusal of a text-to-speech call is about. */
function fieldOf(answer: ProviderAnswer): string {
  const detail = (parseJson(answer.body) as { detail?: unknown } | undefined)?.detail;
  const words = JSON.stringify(detail ?? '').toLowerCase();
  if (Array.isArray(detail)) {
    const loc = (detail[0] as { loc?: unknown[] } | undefined)?.loc ?? [];
    const last = String(loc[loc.length - 1] ?? '');
    const byName: Record<string, string> = { text: 'text', model_id: 'modelId', voice_id: 'voiceId', stability: 'stability', similarity_boost: 'similarityBoost', style: 'style' };
    if (byName[last]) return byName[last];
  }
  if (words.includes('voice')) return 'voiceId';
  if (words.includes('model')) return 'modelId';
  return 'text';
}

export class ElevenLabsEngine implements VoiceEngine {
  readonly defaultModel = ELEVENLABS_DEFAULT_MODEL;

  constructor(private readonly options: VoiceEngineOptions) {}

  private call(signal: AbortSignal): { call: ProviderCall; headers: Record<string, string> } {
    const key = this.options.credentials.apiKey;
    const call = new ProviderCall('voice-provider', this.options.baseUrl ?? ELEVENLABS_BASE_URL, { ...this.options, timeoutMs: this.options.timeoutMs ?? VOICE_TIMEOUT_MS }, signal, readError);
    if (!key) throw call.failure('auth', 'has no API key on this connection');
    return { call, headers: { 'xi-api-key': key } };
  }

  async voices(signal: AbortSignal): Promise<Voice[]> {
    const { call, headers } = this.call(signal);
    const answer = await call.json<{ voices?: ElevenVoice[] }>({ path: '/v1/voices', headers, maxResponseBytes: 8 * 1024 * 1024 });
    return (answer.voices ?? []).flatMap((v) => (v.voice_id ? [{
      id: v.voice_id,
      name: v.name ?? v.voice_id,
      category: v.category ?? 'premade',
      previewUrl: v.preview_url ?? null,
      labels: Object.fromEntries(Object.entries(v.labels ?? {}).filter(([, value]) => typeof value === 'string')) as Record<string, string>,
    }] : []));
  }

  async models(signal: AbortSignal): Promise<VoiceModel[]> {
    const { call, headers } = this.call(signal);
    const answer = await call.json<ElevenModel[]>({ path: '/v1/models', headers });
    if (!Array.isArray(answer)) throw call.failure('unavailable', 'answered /v1/models with something other than a list');
    return answer.filter((m) => m.model_id && m.can_do_text_to_speech !== false).map((m) => ({
      id: houseModelId(m.model_id!),
      name: m.name ?? m.model_id!,
      languages: (m.languages ?? []).flatMap((l) => (l.language_id ? [{ id: l.language_id, name: l.name ?? l.language_id }] : [])),
      maxCharacters: m.max_characters_request_subscribed_user ?? m.max_characters_request_free_user ?? 5_000,
    }));
  }

  async usage(signal: AbortSignal): Promise<CharacterAllowance> {
    const { call, headers } = this.call(signal);
    const s = await call.json<ElevenSubscription>({ path: '/v1/user/subscription', headers });
    const count = Number.isFinite(s.character_count) ? s.character_count! : 0;
    const limit = Number.isFinite(s.character_limit) ? s.character_limit! : null;
    return {
      tier: s.tier ?? 'unknown',
      characterCount: count,
      characterLimit: limit,
      charactersRemaining: limit === null ? null : Math.max(0, limit - count),
      resetsAt: Number.isFinite(s.next_character_count_reset_unix) ? new Date(s.next_character_count_reset_unix! * 1000).toISOString() : null,
    };
  }

  async speak(request: SpeechRequest, signal: AbortSignal): Promise<Buffer> {
    const { call, headers } = this.call(signal);
    const settings = {
      ...(request.stability !== undefined ? { stability: request.stability } : {}),
      ...(request.similarityBoost !== undefined ? { similarity_boost: request.similarityBoost } : {}),
      ...(request.style !== undefined ? { style: request.style } : {}),
    };
    const body = {
      text: request.text,
      model_id: elevenLabsModelId(request.modelId ?? this.defaultModel),
      ...(Object.keys(settings).length ? { voice_settings: settings } : {}),
    };
    const answer = await call.send({
      method: 'POST',
      path: `/v1/text-to-speech/${encodeURIComponent(request.voiceId)}`,
      query: new URLSearchParams({ output_format: OUTPUT_FORMAT }),
      headers: { ...headers, 'content-type': 'application/json', accept: 'audio/mpeg' },
      body: Buffer.from(JSON.stringify(body)),
      long: true,
      maxResponseBytes: MAX_AUDIO_BYTES,
    });
    if (answer.status < 200 || answer.status >= 300) {
      const refusal = call.refusal(answer);
      if (refusal.kind === 'rejected') throw new VoiceRejected(fieldOf(answer), refusal.message);
      throw refusal;
    }
    if (answer.body.length === 0) throw call.failure('unavailable', 'answered no audio', answer.status);
    return answer.body;
  }
}
