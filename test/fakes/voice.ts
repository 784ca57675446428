import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LoopbackServer, receive } from '#testing/integrations';

/**
 * A loopback fake of ElevenLabs' API, speaking its wire format for tests: the `xi-api-key` header,
 * `GET /v1/voices`, `GET /v1/models`, `GET /v1/user/subscription` (characters counted as it speaks),
 * `POST /v1/text-to-speech/{voice_id}` answering audio/mpeg (a real MP3, made once by espeak-ng and
 * lame), and ElevenLabs' error bodies: 401 `invalid_api_key`, 400 `voice_not_found`, 422 FastAPI
 * validation lists, 429 and 500 on demand.
 */

const run = promisify(execFile);

export interface FakeVoiceRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The JSON body of a text-to-speech call. */
  json?: { text?: string; model_id?: string; voice_settings?: Record<string, number> };
}

/** `server-error`: 500; `rate-limit`: 429; `hang`: read and never answered; `not-audio`: 200 with a JSON body to a text-to-speech call. */
export type VoiceFakeFailure = 'server-error' | 'rate-limit' | 'hang' | 'not-audio';

export const FAKE_VOICES = [
  { voice_id: '21m00Tcm4TlvDq8ikWAM', name: 'Rachel', category: 'premade', preview_url: 'https://storage.googleapis.com/eleven-public-prod/premade/voices/21m00Tcm4TlvDq8ikWAM/preview.mp3', labels: { accent: 'american', gender: 'female', age: 'young', use_case: 'narration' } },
  { voice_id: 'pNInz6obpgDQGcFmaJgB', name: 'Adam', category: 'premade', preview_url: null, labels: { accent: 'american', gender: 'male', age: 'middle aged' } },
];

const MODELS = [
  { model_id: 'eleven_multilingual_v2', name: 'Eleven Multilingual v2', can_do_text_to_speech: true, max_characters_request_free_user: 2500, max_characters_request_subscribed_user: 10000,
    languages: [{ language_id: 'en', name: 'English' }, { language_id: 'de', name: 'German' }, { language_id: 'fr', name: 'French' }] },
  { model_id: 'eleven_turbo_v2_5', name: 'Eleven Turbo v2.5', can_do_text_to_speech: true, max_characters_request_free_user: 2500, max_characters_request_subscribed_user: 40000,
    languages: [{ language_id: 'en', name: 'English' }] },
  { model_id: 'eleven_english_sts_v2', name: 'Eleven English v2 (speech to speech)', can_do_text_to_speech: false, languages: [{ language_id: 'en', name: 'English' }] },
];

export class ElevenLabsFake {
  readonly apiKey = `sk_${randomBytes(16).toString('hex')}`;
  readonly requests: FakeVoiceRequest[] = [];
  baseUrl = '';
  characterCount = 1200;
  characterLimit = 100_000;
  readonly resetUnix = 1_767_225_600;
  failure: VoiceFakeFailure | null = null;
  private revoked = false;
  private readonly server = new LoopbackServer((req, res) => void this.handle(req, res));

  private readonly mp3: Buffer;

  constructor(mp3: Buffer) {
    this.mp3 = mp3;
  }

  /** The key stops working (401 invalid_api_key), as a key deleted in ElevenLabs' dashboard does. */
  revoke(): void {
    this.revoked = true;
  }

  /** Text-to-speech calls received. */
  get spoken(): FakeVoiceRequest[] {
    return this.requests.filter((r) => r.path.startsWith('/v1/text-to-speech/'));
  }

  async start(): Promise<this> {
    this.baseUrl = await this.server.start();
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { method, url, query, body } = await receive(req);
    const record: FakeVoiceRequest = { method, path: url.pathname, query };
    if (body.length) {
      try {
        record.json = JSON.parse(body.toString('utf8')) as FakeVoiceRequest['json'];
      } catch { /* answered 400 below */ }
    }
    this.requests.push(record);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (this.failure === 'hang') return;
    if (this.failure === 'server-error') return json(500, { detail: { status: 'internal_error', message: 'An internal server error occurred.' } });
    if (this.failure === 'rate-limit') return json(429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many concurrent requests for your subscription.' } });
    if (this.revoked || req.headers['xi-api-key'] !== this.apiKey) {
      return json(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    }
    if (req.method === 'GET' && url.pathname === '/v1/voices') return json(200, { voices: FAKE_VOICES });
    if (req.method === 'GET' && url.pathname === '/v1/models') return json(200, MODELS);
    if (req.method === 'GET' && url.pathname === '/v1/user/subscription') {
      return json(200, { tier: 'creator', character_count: this.characterCount, character_limit: this.characterLimit, can_extend_character_limit: true, next_character_count_reset_unix: this.resetUnix, status: 'active' });
    }
    const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && tts) {
      const voiceId = decodeURIComponent(tts[1]!);
      const input = record.json;
      if (!input) return json(400, { detail: { status: 'invalid_json', message: 'The body is not JSON' } });
      if (typeof input.text !== 'string' || !input.text.trim()) return json(422, { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] });
      for (const [name, value] of Object.entries(input.voice_settings ?? {})) {
        if (typeof value !== 'number' || value < 0 || value > 1) return json(422, { detail: [{ loc: ['body', 'voice_settings', name], msg: 'Input should be less than or equal to 1', type: 'less_than_equal' }] });
      }
      if (!FAKE_VOICES.some((v) => v.voice_id === voiceId)) return json(400, { detail: { status: 'voice_not_found', message: `A voice with the voice_id ${voiceId} was not found.` } });
      const model = MODELS.find((m) => m.model_id === (input.model_id ?? 'eleven_multilingual_v2') && m.can_do_text_to_speech);
      if (!model) return json(400, { detail: { status: 'model_not_found', message: `A model with model ID ${input.model_id} does not exist or cannot do text to speech.` } });
      if (this.characterCount + input.text.length > this.characterLimit) {
        return json(401, { detail: { status: 'quota_exceeded', message: `This request exceeds your quota of ${this.characterLimit}.` } });
      }
      this.characterCount += input.text.length;
      if (this.failure === 'not-audio') return json(200, { audio: 'none' });
      return void res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': this.mp3.length, 'character-cost': String(input.text.length) }).end(this.mp3);
    }
    json(404, { detail: 'Not Found' });
  }
}

/** A short real MP3 ("This is a voice over.", espeak-ng + lame) for the fake's answers. */
export async function fakeVoiceMp3(): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'voice-fake-'));
  try {
    await run('espeak-ng', ['-v', 'en-us', '-w', join(dir, 'a.wav'), 'This is a voice over.']);
    await run('lame', ['--quiet', '-m', 'm', '-b', '64', join(dir, 'a.wav'), join(dir, 'a.mp3')]);
    return await readFile(join(dir, 'a.mp3'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startElevenLabsFake(): Promise<ElevenLabsFake> {
  return new ElevenLabsFake(await fakeVoiceMp3()).start();
}
