import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from '#testing/integrations';
import { join } from 'node:path';
import { PCM_RATE, wavOf, type RecognitionSettings, type SpeechAudio } from '#libs/captions';

/**
 * Loopback fakes of the three speech providers, speaking their wire formats (the routes, auth,
 * parameters, job states and error bodies the adapters in ./providers read), for tests: each is a
 * node:http server on 127.0.0.1 that checks credentials the way its provider does, records what it
 * was sent (credentials redacted), answers the words a test scripts, and fails on demand.
 */

export interface FakeWord {
  /** As it should read with punctuation on ("Hello,"); the fakes derive the bare form themselves. */
  word: string;
  start: number;
  end: number;
  confidence?: number;
  speaker?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Query parameters, repeated ones in order; a credential (`key`) shows as `[redacted]`. */
  query: Record<string, string[]>;
  /** Lower-cased names; credential headers show as `[redacted]`. */
  headers: Record<string, string>;
  bodyBytes: number;
  /** A JSON body (Google's inline audio replaced by what the fake read from it). */
  json?: unknown;
}

/**
 * - `server-error`: every request answers 500; `rate-limit`: 429;
 * - `hang`: every request is read and never answered (for timeouts);
 * - `job-error`: the recognition itself fails (AssemblyAI status `error`, Google operation with
 *   `error`, Deepgram a 400 "failed to process audio"), with `message` when given.
 */
export type FakeFailure = 'server-error' | 'rate-limit' | 'hang' | 'job-error';

interface Answer {
  status: number;
  body: unknown;
}

interface Incoming {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
  record: RecordedRequest;
}

const REDACTED = '[redacted]';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Words each fake masks when the request asks for profanity filtering (first letter kept, as Google and AssemblyAI do). */
const PROFANE = new Set(['damn', 'hell', 'crap', 'shit']);

/** What the three fakes share: credentials, recording, scripted words, failure modes. */
export abstract class SpeechProviderFake {
  /** The credential the fake accepts (until revoked). */
  readonly apiKey = `key-${randomBytes(12).toString('hex')}`;
  readonly requests: RecordedRequest[] = [];
  baseUrl = '';
  /** Polls answered "not finished" before a job is done (AssemblyAI, Google); at least one. */
  pollsBeforeDone = 2;
  protected words: FakeWord[] = [];
  /** What language detection answers (provider's own code form); null: the fake's default. */
  protected detected: string | null = null;
  protected audioSeconds: number | null = null;
  protected failure: { mode: FakeFailure; message?: string } | null = null;
  protected revoked = false;
  private readonly server = new LoopbackServer((req, res) => {
    this.handle(req, res).catch((err: Error) => {
      if (!res.headersSent) send(res, { status: 500, body: this.errorBody(500, `fake failed: ${err.message}`) });
    });
  });

  /** The words the next recognitions answer. */
  script(words: FakeWord[], audioSeconds?: number): this {
    this.words = words;
    this.audioSeconds = audioSeconds ?? null;
    return this;
  }

  /**
   * Words from a text with even timings (`wordSec` each, `gapSec` between); sentences go to
   * speakers in turn when `speakers` > 1.
   */
  say(text: string, opts: { wordSec?: number; gapSec?: number; speakers?: number; confidence?: number } = {}): this {
    const { wordSec = 0.4, gapSec = 0.1, speakers = 1, confidence = 0.93 } = opts;
    let sentence = 0;
    let at = 0;
    this.words = text.split(/\s+/).filter(Boolean).map((word) => {
      const w = { word, start: round(at), end: round(at + wordSec), confidence, speaker: sentence % speakers };
      at += wordSec + gapSec;
      if (/[.!?]$/.test(word)) sentence++;
      return w;
    });
    this.audioSeconds = null;
    return this;
  }

  /** The language automatic detection finds. */
  detect(code: string): this {
    this.detected = code;
    return this;
  }

  fail(mode: FakeFailure, message?: string): this {
    this.failure = { mode, message };
    return this;
  }

  recover(): this {
    this.failure = null;
    return this;
  }

  /** The key stops working, as a key deleted in the provider's console. */
  revokeKey(): this {
    this.revoked = true;
    return this;
  }

  /** Requests whose path starts with `prefix`. */
  sent(prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  async listen(): Promise<this> {
    this.baseUrl = await this.server.start();
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** The answer to a request; null: read and never answered (the socket stays open until close()). */
  protected abstract route(req: Incoming): Answer | null;
  protected abstract errorBody(status: number, message: string): unknown;
  /** The JSON body as recorded (credentials or bulky fields replaced). */
  protected recordJson(json: unknown): unknown {
    return json;
  }

  protected audioSec(): number {
    return this.audioSeconds ?? round((this.words.at(-1)?.end ?? 0) + 0.5);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return send(res, { status: 413, body: this.errorBody(413, 'Request entity too large') });
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const record: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: {}, headers: {}, bodyBytes: body.length };
    for (const [name, value] of url.searchParams) (record.query[name] ??= []).push(name === 'key' ? REDACTED : value);
    for (const [name, value] of Object.entries(req.headers)) {
      record.headers[name] = name === 'authorization' || name === 'x-goog-api-key' ? REDACTED : String(value);
    }
    if (/json/.test(req.headers['content-type'] ?? '')) {
      try {
        record.json = this.recordJson(JSON.parse(body.toString('utf8')));
      } catch {
        record.json = undefined;
      }
    }
    this.requests.push(record);
    if (this.failure?.mode === 'hang') return; // read, never answered: the socket stays open until close()
    if (this.failure?.mode === 'server-error') return send(res, { status: 500, body: this.errorBody(500, 'Internal server error') });
    if (this.failure?.mode === 'rate-limit') return send(res, { status: 429, body: this.errorBody(429, 'Too many requests') });
    const answer = this.route({ method: record.method, url, headers: req.headers, body, record });
    if (answer) send(res, answer);
  }
}

function send(res: ServerResponse, answer: Answer): void {
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** The bare, lower-cased word a recogniser gives without punctuation (a masked word keeps its asterisks). */
function bare(word: string): string {
  return word.toLowerCase().replace(/[^\p{L}\p{N}'*-]/gu, '');
}

/** A profane word masked ("d***"), its punctuation kept. */
function unprofane(word: string): string {
  const core = bare(word);
  return PROFANE.has(core) ? word.replace(new RegExp(core.slice(1), 'i'), '*'.repeat(core.length - 1)) : word;
}

/** The container of a media file from its first bytes, or null when it is none the fakes know. */
function container(bytes: Buffer): 'wav' | 'flac' | 'mp3' | 'ogg' | 'mp4' | 'webm' | null {
  const head = bytes.subarray(0, 12).toString('latin1');
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WAVE') return 'wav';
  if (head.startsWith('fLaC')) return 'flac';
  if (head.startsWith('OggS')) return 'ogg';
  if (head.startsWith('ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'mp3';
  if (head.slice(4, 8) === 'ftyp') return 'mp4';
  if (bytes.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  return null;
}

// --- speech-alpha: Deepgram -------------------------------------------------------------------

const DEEPGRAM_MODELS = ['nova-3', 'nova-3-general', 'nova-3-medical', 'nova-2', 'nova-2-general', 'nova-2-meeting', 'nova-2-phonecall', 'nova-2-video', 'enhanced', 'base'];

/** Deepgram's `POST /v1/listen` with raw audio bytes; `Authorization: Token <key>`. */
export class DeepgramFake extends SpeechProviderFake {
  protected errorBody(status: number, message: string): unknown {
    const code = status === 500 ? 'INTERNAL_SERVER_ERROR' : status === 429 ? 'TOO_MANY_REQUESTS' : 'Bad Request';
    return { err_code: code, err_msg: message, request_id: randomUUID() };
  }

  protected route({ method, url, headers, body }: Incoming): Answer {
    const projects = method === 'GET' && url.pathname === '/v1/projects';
    if (!projects && (method !== 'POST' || url.pathname !== '/v1/listen')) return { status: 404, body: { err_code: 'NOT_FOUND', err_msg: 'Not Found', request_id: randomUUID() } };
    if (this.revoked || headers.authorization !== `Token ${this.apiKey}`) {
      return { status: 401, body: { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: randomUUID() } };
    }
    // The projects the key reaches: what a key check asks for.
    if (projects) return { status: 200, body: { projects: [{ project_id: 'proj-fake', name: 'Fake project' }] } };
    const bad = (message: string): Answer => ({ status: 400, body: this.errorBody(400, message) });
    const q = url.searchParams;
    const model = q.get('model') ?? 'base';
    if (!DEEPGRAM_MODELS.includes(model)) return bad('No such model/language/tier combination found.');
    const nova3 = model.startsWith('nova-3');
    if (nova3 && q.has('keywords')) return bad('Keywords are not supported on Nova-3 models: use keyterm.');
    if (!nova3 && q.has('keyterm')) return bad('Keyterm prompting is only available on Nova-3 models.');
    if (q.get('language') === 'multi' && !/^nova-[23]/.test(model)) return bad('language=multi requires a Nova-2 or Nova-3 model.');
    if (/json/.test(headers['content-type'] ?? '') || container(body) === null || this.failure?.mode === 'job-error') {
      return bad(this.failure?.message ?? 'Bad Request: failed to process audio: corrupt or unsupported data');
    }
    const punctuate = q.get('punctuate') === 'true';
    const diarize = q.get('diarize') === 'true';
    const filter = q.get('profanity_filter') === 'true';
    const words = this.words.map((w) => {
      const shown = filter ? unprofane(w.word) : w.word;
      return {
        word: bare(shown),
        start: w.start,
        end: w.end,
        confidence: w.confidence ?? 0.9,
        ...(punctuate ? { punctuated_word: shown } : {}),
        ...(diarize ? { speaker: w.speaker ?? 0, speaker_confidence: 0.8 } : {}),
      };
    });
    const language = this.detected ?? 'en';
    const channel: Record<string, unknown> = {
      alternatives: [{
        transcript: words.map((w) => w.punctuated_word ?? w.word).join(' '),
        confidence: 0.95,
        words,
        ...(q.get('language') === 'multi' ? { languages: [language] } : {}),
      }],
    };
    if (q.get('detect_language') === 'true') Object.assign(channel, { detected_language: language, language_confidence: 0.97 });
    const modelId = randomUUID();
    return {
      status: 200,
      body: {
        metadata: {
          transaction_key: 'deprecated',
          request_id: randomUUID(),
          sha256: randomBytes(32).toString('hex'),
          created: new Date().toISOString(),
          duration: this.audioSec(),
          channels: 1,
          models: [modelId],
          model_info: { [modelId]: { name: `general-${model}`, version: '2025-01-01.0', arch: model } },
        },
        results: { channels: [channel] },
      },
    };
  }
}

// --- speech-beta: AssemblyAI ------------------------------------------------------------------

const ASSEMBLYAI_MODELS = ['universal-3-pro', 'universal-2'];
const UNIVERSAL_3_PRO = ['en', 'en_us', 'en_uk', 'en_au', 'es', 'de', 'fr', 'pt', 'it'];

interface AssemblyAiJob {
  id: string;
  request: Record<string, unknown>;
  polls: number;
}

/** AssemblyAI's v2: `POST /v2/upload`, `POST /v2/transcript`, `GET /v2/transcript/{id}`; `authorization: <key>`. */
export class AssemblyAiFake extends SpeechProviderFake {
  private readonly uploads = new Set<string>();
  private readonly jobs = new Map<string, AssemblyAiJob>();

  protected errorBody(_status: number, message: string): unknown {
    return { error: message };
  }

  protected route({ method, url, headers, body }: Incoming): Answer {
    if (this.revoked || headers.authorization !== this.apiKey) return { status: 401, body: { error: 'Authentication error, API token missing/invalid' } };
    const bad = (message: string): Answer => ({ status: 400, body: { error: message } });
    if (method === 'GET' && url.pathname === '/v2/transcript') return { status: 200, body: { page_details: { limit: Number(url.searchParams.get('limit') ?? 10), result_count: 0 }, transcripts: [] } };
    if (method === 'POST' && url.pathname === '/v2/upload') {
      if (body.length === 0) return bad('Upload failed: the request body is empty');
      const uploadUrl = `https://cdn.assemblyai.com/upload/${randomUUID()}`;
      this.uploads.add(uploadUrl);
      return { status: 200, body: { upload_url: uploadUrl } };
    }
    if (method === 'POST' && url.pathname === '/v2/transcript') {
      let request: Record<string, unknown>;
      try {
        request = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return bad('Invalid JSON body');
      }
      if (typeof request.audio_url !== 'string') return bad('audio_url is required');
      if (request.language_detection === true && request.language_code !== undefined) return bad('language_code cannot be set when language_detection is enabled');
      const models = request.speech_models;
      if (models !== undefined && (!Array.isArray(models) || models.length === 0 || models.some((m) => !ASSEMBLYAI_MODELS.includes(String(m))))) {
        return bad(`Invalid speech_models: ${JSON.stringify(models)}`);
      }
      const job = { id: randomUUID(), request, polls: 0 };
      this.jobs.set(job.id, job);
      return { status: 200, body: this.transcript(job, 'queued') };
    }
    const match = /^\/v2\/transcript\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && match) {
      const job = this.jobs.get(decodeURIComponent(match[1]!));
      if (!job) return { status: 404, body: { error: 'Transcript lookup error, transcript id not found' } };
      job.polls++;
      if (job.polls <= Math.max(1, this.pollsBeforeDone)) return { status: 200, body: this.transcript(job, 'processing') };
      if (!this.uploads.has(String(job.request.audio_url))) {
        return { status: 200, body: this.transcript(job, 'error', `Download error, unable to download ${String(job.request.audio_url)}. Please make sure the file exists and is accessible from the internet.`) };
      }
      if (this.failure?.mode === 'job-error') {
        return { status: 200, body: this.transcript(job, 'error', this.failure.message ?? 'Transcoding failed. File does not appear to contain audio. File type is application/octet-stream (data).') };
      }
      return { status: 200, body: this.transcript(job, 'completed') };
    }
    return { status: 404, body: { error: 'Not found' } };
  }

  private transcript(job: AssemblyAiJob, status: 'queued' | 'processing' | 'completed' | 'error', error?: string): unknown {
    const r = job.request;
    const detect = r.language_detection === true;
    const language = detect ? (this.detected ?? 'en_us') : typeof r.language_code === 'string' ? r.language_code : 'en_us';
    const common = { id: job.id, status, audio_url: r.audio_url, language_code: language, language_detection: detect, punctuate: r.punctuate ?? true, format_text: r.format_text ?? true, speaker_labels: r.speaker_labels ?? false, speech_models: r.speech_models ?? null };
    if (status === 'error') return { ...common, error };
    if (status !== 'completed') return { ...common, text: null, words: null, audio_duration: null };
    const requested = Array.isArray(r.speech_models) ? r.speech_models.map(String) : ['universal-3-pro', 'universal-2'];
    const used = requested.find((m) => m !== 'universal-3-pro' || UNIVERSAL_3_PRO.includes(language)) ?? requested[0];
    const formatted = r.punctuate !== false && r.format_text !== false;
    const words = this.words.map((w) => {
      const shown = r.filter_profanity === true ? unprofane(w.word) : w.word;
      return {
        text: formatted ? shown : bare(shown) || shown,
        start: Math.round(w.start * 1000),
        end: Math.round(w.end * 1000),
        confidence: w.confidence ?? 0.9,
        speaker: r.speaker_labels === true ? String.fromCharCode(65 + (w.speaker ?? 0)) : null,
      };
    });
    return { ...common, speech_model_used: used, text: words.map((w) => w.text).join(' '), words, confidence: 0.94, audio_duration: this.audioSec() };
  }
}

// --- speech-gamma: Google Cloud Speech-to-Text v1 -------------------------------------------------

/** Google's limit on a request with inline audio, and the duration it accepts inline. */
const GOOGLE_MAX_REQUEST = 10 * 1024 * 1024;
const GOOGLE_INLINE_SEC = 60;
const OPUS_RATES = [8000, 12000, 16000, 24000, 48000];

/** What the Google fake read from a request's inline audio (recorded in place of the base64 content). */
export interface InlineAudio {
  bytes: number;
  container: string | null;
  channels: number | null;
  sampleRate: number | null;
  durationSec: number | null;
}

interface GoogleOperation {
  name: string;
  config: Record<string, unknown>;
  durationSec: number;
  polls: number;
  /** The words heard in this request's audio (`hearTones`); absent: the scripted words. */
  heard?: FakeWord[];
  /** The operation ends in this error (`failRecognition(n, 'job-error')`). */
  error?: string;
}

/** How one recognition request fails: as `fail` does, or `revoked-key`: the key stops working there. */
export type FakeRecognitionFailure = FakeFailure | 'revoked-key';

/**
 * Google's v1 `POST /v1/speech:longrunningrecognize` and `GET /v1/operations/{name}`, with an API
 * key (`?key=` or `x-goog-api-key`) or an access token (`Authorization: Bearer`), and v1's rules
 * for inline audio: the encoding (FLAC/WAV read from their header, others declared with a sample
 * rate; MP3 is v1p1beta1 only), mono only, 10 MB per request, about a minute of audio.
 */
export class GoogleSpeechFake extends SpeechProviderFake {
  readonly accessToken = `ya29.${randomBytes(16).toString('hex')}`;
  private readonly operations = new Map<string, GoogleOperation>();
  /** What each recognition request's audio held, in the order they came (`hearTones`). */
  readonly heard: { durationSec: number; words: FakeWord[] }[] = [];
  private listening = false;
  private recognitions = 0;
  private failing: { nth: number; mode: FakeRecognitionFailure; message?: string } | null = null;

  /**
   * Answers what the audio of each request holds instead of the scripted words: every burst of
   * sound is one word, named after its pitch ("440hz"), at its times within that request's audio
   * (see `toneSpeech`). A long recording sent in parts thus comes back part by part as it sounds.
   */
  hearTones(): this {
    this.listening = true;
    return this;
  }

  /** The `nth` recognition request from now (1 = the next) fails as `mode` says; the others are answered as usual. */
  failRecognition(nth: number, mode: FakeRecognitionFailure, message?: string): this {
    this.recognitions = 0;
    this.failing = { nth, mode, message };
    return this;
  }

  protected errorBody(status: number, message: string): unknown {
    const name = status === 429 ? 'RESOURCE_EXHAUSTED' : status === 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
    return { error: { code: status, message, status: name } };
  }

  protected override recordJson(json: unknown): unknown {
    const audio = (json as { audio?: { content?: unknown } } | null)?.audio;
    if (typeof audio?.content !== 'string') return json;
    return { ...(json as object), audio: { content: inspectInline(Buffer.from(audio.content, 'base64')) } };
  }

  protected route({ method, url, headers, body }: Incoming): Answer | null {
    const denied = this.authenticate(url, headers);
    if (denied) return denied;
    const bad = (message: string): Answer => ({ status: 400, body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } });
    if (method === 'GET' && url.pathname === '/v1/operations') return { status: 200, body: {} };
    if (method === 'POST' && url.pathname === '/v1/speech:longrunningrecognize') {
      if (body.length > GOOGLE_MAX_REQUEST) return bad(`Request payload size exceeds the limit: ${GOOGLE_MAX_REQUEST} bytes.`);
      let request: { config?: Record<string, unknown>; audio?: { content?: string; uri?: string } };
      try {
        request = JSON.parse(body.toString('utf8')) as typeof request;
      } catch {
        return bad('Invalid JSON payload received.');
      }
      const config = request.config;
      if (!config) return bad("Invalid recognition 'config': config is required.");
      if (typeof config.languageCode !== 'string' || !config.languageCode) return bad("Invalid recognition 'config': language_code is required.");
      const alternatives = config.alternativeLanguageCodes;
      if (Array.isArray(alternatives) && alternatives.length > 3) return bad("Invalid recognition 'config': at most 3 alternative language codes are allowed.");
      if (typeof request.audio?.content !== 'string') return bad('RecognitionAudio not set.');
      const bytes = Buffer.from(request.audio.content, 'base64');
      const audio = inspectInline(bytes);
      const refused = checkEncoding(config, audio);
      if (refused) return bad(refused);
      if ((audio.durationSec ?? 0) > GOOGLE_INLINE_SEC) return bad('Inline audio exceeds duration limit. Please use a GCS URI.');
      const op: GoogleOperation = { name: String(Date.now()) + String(Math.floor(Math.random() * 1e6)).padStart(6, '0'), config, durationSec: audio.durationSec ?? this.audioSec(), polls: 0 };
      if (this.listening) {
        op.heard = tonesIn(bytes);
        this.heard.push({ durationSec: op.durationSec, words: op.heard });
      }
      const failing = this.failing?.nth === ++this.recognitions ? this.failing : null;
      switch (failing?.mode) {
        case 'hang':
          return null;
        case 'server-error':
          return { status: 500, body: this.errorBody(500, failing.message ?? 'Internal server error') };
        case 'rate-limit':
          return { status: 429, body: this.errorBody(429, failing.message ?? 'Too many requests') };
        case 'revoked-key':
          this.revoked = true;
          return this.authenticate(url, headers);
        case 'job-error':
          op.error = failing.message ?? 'Invalid audio: the recording could not be decoded.';
          break;
      }
      this.operations.set(op.name, op);
      return { status: 200, body: { name: op.name } };
    }
    const match = /^\/v1\/operations\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && match) {
      const op = this.operations.get(match[1]!);
      if (!op) return { status: 404, body: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } } };
      op.polls++;
      const metadata = { '@type': 'type.googleapis.com/google.cloud.speech.v1.LongRunningRecognizeMetadata', progressPercent: 0, startTime: new Date().toISOString(), lastUpdateTime: new Date().toISOString() };
      if (op.polls <= Math.max(1, this.pollsBeforeDone)) return { status: 200, body: { name: op.name, metadata: { ...metadata, progressPercent: Math.min(99, op.polls * 30) } } };
      const error = op.error ?? (this.failure?.mode === 'job-error' ? (this.failure.message ?? 'Invalid audio: the recording could not be decoded.') : undefined);
      if (error !== undefined) {
        return { status: 200, body: { name: op.name, metadata: { ...metadata, progressPercent: 100 }, done: true, error: { code: 3, message: error } } };
      }
      return { status: 200, body: { name: op.name, metadata: { ...metadata, progressPercent: 100, uri: '' }, done: true, response: this.results(op) } };
    }
    return { status: 404, body: { error: { code: 404, message: `The requested URL ${url.pathname} was not found on this server.`, status: 'NOT_FOUND' } } };
  }

  /** Google's answers to a missing, wrong or revoked credential. */
  private authenticate(url: URL, headers: IncomingHttpHeaders): Answer | null {
    const key = url.searchParams.get('key') ?? (headers['x-goog-api-key'] as string | undefined);
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    if (bearer !== undefined) {
      if (!this.revoked && bearer === this.accessToken) return null;
      return {
        status: 401,
        body: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.', status: 'UNAUTHENTICATED', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_EXPIRED', domain: 'googleapis.com', metadata: { service: 'speech.googleapis.com', method: 'google.cloud.speech.v1.Speech.LongRunningRecognize' } }] } },
      };
    }
    if (key !== undefined) {
      if (!this.revoked && key === this.apiKey) return null;
      return {
        status: 400,
        body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'speech.googleapis.com' } }] } },
      };
    }
    return {
      status: 403,
      body: { error: { code: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", status: 'PERMISSION_DENIED' } },
    };
  }

  private results(op: GoogleOperation): unknown {
    const config = op.config;
    const punctuate = config.enableAutomaticPunctuation === true;
    const filter = config.profanityFilter === true;
    const asked = [config.languageCode, ...((config.alternativeLanguageCodes as unknown[] | undefined) ?? [])].map(String);
    const language = (this.detected && asked.some((c) => c.toLowerCase() === this.detected!.toLowerCase()) ? this.detected : asked[0]!).toLowerCase();
    // One result per sentence, as Google splits long audio.
    const sentences: FakeWord[][] = [[]];
    for (const w of op.heard ?? this.words) {
      sentences.at(-1)!.push(w);
      if (/[.!?]$/.test(w.word)) sentences.push([]);
    }
    const results = sentences.filter((s) => s.length > 0).map((sentence) => ({
      alternatives: [{
        transcript: sentence.map((w) => w.word).join(' '),
        confidence: 0.92,
        words: sentence.map((w) => {
          const shown = filter ? unprofane(w.word) : w.word;
          return {
            startTime: duration(w.start),
            endTime: duration(w.end),
            word: punctuate ? shown : shown.replace(/[.,!?;:]+$/, ''),
            ...(config.enableWordConfidence === true ? { confidence: w.confidence ?? 0.9 } : {}),
          };
        }),
      }],
      resultEndTime: duration(sentence.at(-1)!.end),
      languageCode: language,
    }));
    return {
      '@type': 'type.googleapis.com/google.cloud.speech.v1.LongRunningRecognizeResponse',
      results,
      totalBilledTime: `${Math.ceil(op.durationSec)}s`,
      requestId: String(Math.floor(Math.random() * 1e18)),
    };
  }
}

/** A protobuf Duration's JSON form: "1.500s", "0s". */
function duration(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(3)}s`;
}

/** v1's encoding rules for inline audio; the refusal's message, or null when the audio is readable. */
function checkEncoding(config: Record<string, unknown>, audio: InlineAudio): string | null {
  const encoding = typeof config.encoding === 'string' ? config.encoding : 'ENCODING_UNSPECIFIED';
  const rate = typeof config.sampleRateHertz === 'number' ? config.sampleRateHertz : null;
  const bad = "Invalid recognition 'config': bad encoding..";
  switch (encoding) {
    case 'ENCODING_UNSPECIFIED':
      if (audio.container !== 'flac' && audio.container !== 'wav') return bad;
      break;
    case 'FLAC':
      if (audio.container !== 'flac') return bad;
      break;
    case 'LINEAR16':
      if (audio.container !== 'wav' && rate === null) return "Invalid recognition 'config': sample_rate_hertz is required for LINEAR16 without a WAV header.";
      break;
    case 'OGG_OPUS':
      if (audio.container !== 'ogg') return bad;
      if (rate === null || !OPUS_RATES.includes(rate)) return "Invalid recognition 'config': OGG_OPUS needs sample_rate_hertz of 8000, 12000, 16000, 24000 or 48000.";
      break;
    case 'MP3':
      return "Invalid recognition 'config': MP3 encoding is only available in v1p1beta1.";
    default:
      return bad;
  }
  if (rate !== null && audio.sampleRate !== null && rate !== audio.sampleRate) {
    return `sample_rate_hertz (${rate}) must match the value in the ${audio.container?.toUpperCase()} header (${audio.sampleRate}).`;
  }
  if ((audio.channels ?? 1) > 1 && typeof config.audioChannelCount !== 'number') {
    return `Must use single channel (mono) audio, but ${audio.container?.toUpperCase()} header indicates ${audio.channels} channels.`;
  }
  return null;
}

/** The container, channels, rate and duration of inline audio, from a FLAC STREAMINFO or a WAV fmt chunk. */
export function inspectInline(bytes: Buffer): InlineAudio {
  const found = bytes.length >= 12 ? container(bytes) : null;
  const info: InlineAudio = { bytes: bytes.length, container: found, channels: null, sampleRate: null, durationSec: null };
  if (found === 'flac' && bytes.length >= 42) {
    // STREAMINFO: 20 bits rate, 3 bits channels − 1, 5 bits depth − 1, 36 bits total samples.
    const packed = bytes.readBigUInt64BE(18);
    info.sampleRate = Number(packed >> 44n);
    info.channels = Number((packed >> 41n) & 7n) + 1;
    const total = Number(packed & 0xfffffffffn);
    info.durationSec = info.sampleRate > 0 && total > 0 ? round(total / info.sampleRate) : null;
  }
  const wav = found === 'wav' ? wavLayout(bytes) : null;
  if (wav) {
    info.channels = wav.channels;
    info.sampleRate = wav.sampleRate;
    info.durationSec = wav.data && wav.byteRate > 0 ? round(wav.data.size / wav.byteRate) : null;
  }
  return info;
}

/** A WAV's fmt chunk and where its samples are. */
function wavLayout(bytes: Buffer): { channels: number | null; sampleRate: number | null; byteRate: number; bits: number; data: { offset: number; size: number } | null } {
  const layout = { channels: null as number | null, sampleRate: null as number | null, byteRate: 0, bits: 0, data: null as { offset: number; size: number } | null };
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= bytes.length) {
      layout.channels = bytes.readUInt16LE(at + 10);
      layout.sampleRate = bytes.readUInt32LE(at + 12);
      layout.byteRate = bytes.readUInt32LE(at + 16);
      layout.bits = bytes.readUInt16LE(at + 22);
    }
    if (id === 'data') {
      layout.data = { offset: at + 8, size: Math.min(size, bytes.length - at - 8) };
      break;
    }
    at += 8 + size + (size % 2);
  }
  return layout;
}

/** Level (of full scale) above which a 10 ms frame counts as sound, and the hysteresis of the pitch count. */
const SOUND_RMS = 0.01;
const PITCH_HYSTERESIS = 0.02 * 32768;

/**
 * The tones in a mono 16-bit WAV as words (`GoogleSpeechFake.hearTones`): each run of 10 ms
 * frames with sound is one word, its pitch from the time between its first and last
 * zero crossing (with hysteresis, so quantisation noise counts for none), rounded to 10 Hz.
 */
function tonesIn(bytes: Buffer): FakeWord[] {
  const wav = container(bytes) === 'wav' ? wavLayout(bytes) : null;
  if (!wav?.data || wav.channels !== 1 || wav.bits !== 16 || !wav.sampleRate) return [];
  const rate = wav.sampleRate;
  const samples = new Int16Array(Buffer.from(bytes.subarray(wav.data.offset, wav.data.offset + (wav.data.size & ~1))).buffer);
  const frame = rate / 100;
  const loud = (f: number) => {
    let sum = 0;
    const end = Math.min(samples.length, (f + 1) * frame);
    for (let i = f * frame; i < end; i++) sum += (samples[i]! / 32768) ** 2;
    return Math.sqrt(sum / Math.max(1, end - f * frame)) > SOUND_RMS;
  };
  const words: FakeWord[] = [];
  const frames = Math.ceil(samples.length / frame);
  for (let f = 0; f < frames;) {
    if (!loud(f)) {
      f++;
      continue;
    }
    const first = f;
    while (f < frames && loud(f)) f++;
    const [from, to] = [first * frame, Math.min(samples.length, f * frame)];
    const crossings: number[] = [];
    let side = 0;
    for (let i = from; i < to; i++) {
      const now = samples[i]! > PITCH_HYSTERESIS ? 1 : samples[i]! < -PITCH_HYSTERESIS ? -1 : side;
      if (now !== side && side !== 0) crossings.push(i);
      side = now;
    }
    const span = (crossings.at(-1)! - crossings[0]!) / rate;
    const hz = crossings.length > 2 && span > 0 ? Math.round((crossings.length - 1) / 2 / span / 10) * 10 : 0;
    words.push({ word: `${hz}hz`, start: round(from / rate), end: round(to / rate), confidence: 0.9 });
  }
  return words;
}

export interface ToneSpeech {
  /** Mono 16 kHz 16-bit WAV. */
  wav: Buffer;
  /** What `hearTones` hears in it, with times from its start. */
  words: FakeWord[];
  durationSec: number;
}

/**
 * A recording of "speech" the Google fake can hear (`hearTones`): sentences of tone words (each
 * `wordSec` long at its own pitch, 300–1080 Hz, `gapSec` apart), `pauseSec` of silence after
 * each sentence; `sentences` gives each one's word count.
 */
export function toneSpeech(sentences: readonly number[], opts: { wordSec?: number; gapSec?: number; pauseSec?: number } = {}): ToneSpeech {
  const { wordSec = 0.35, gapSec = 0.15, pauseSec = 0.8 } = opts;
  const rate = PCM_RATE;
  const at = (sec: number) => Math.round(sec * rate);
  const words: FakeWord[] = [];
  let t = pauseSec;
  for (const count of sentences) {
    for (let i = 0; i < count; i++) {
      words.push({ word: `${300 + 20 * (words.length % 40)}hz`, start: round(t), end: round(t + wordSec), confidence: 0.9 });
      t += wordSec + (i < count - 1 ? gapSec : pauseSec);
    }
  }
  const durationSec = round(t);
  const pcm = Buffer.alloc(at(durationSec) * 2);
  for (const w of words) {
    const hz = Number.parseInt(w.word, 10);
    for (let i = at(w.start); i < at(w.end); i++) pcm.writeInt16LE(Math.round(8192 * Math.sin((2 * Math.PI * hz * (i - at(w.start))) / rate)), i * 2);
  }
  return { wav: wavOf(pcm), words, durationSec };
}

export async function startDeepgramFake(): Promise<DeepgramFake> {
  return new DeepgramFake().listen();
}

export async function startAssemblyAiFake(): Promise<AssemblyAiFake> {
  return new AssemblyAiFake().listen();
}

export async function startGoogleSpeechFake(): Promise<GoogleSpeechFake> {
  return new GoogleSpeechFake().listen();
}

const MIMES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', flac: 'audio/flac', m4a: 'audio/mp4', mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm' };

/** `bytes` written to `dir` as a recording of `format` (the description a probe would give of it). */
export async function speechAudio(dir: string, bytes: Buffer, format: string, durationSec: number): Promise<SpeechAudio> {
  const path = join(dir, `${randomUUID()}.${format}`);
  await writeFile(path, bytes);
  return { path, sizeBytes: bytes.length, kind: ['mp4', 'mov', 'webm'].includes(format) ? 'video' : 'audio', format, mime: MIMES[format] ?? 'application/octet-stream', durationSec };
}

/** Recognition settings: English, punctuated, nothing else asked, with `overrides`. */
export function recognitionSettings(overrides: Partial<RecognitionSettings> = {}): RecognitionSettings {
  return { languageCode: 'en-US', alternativeLanguageCodes: [], model: null, diarize: false, keywords: [], punctuation: true, filterProfanity: false, ...overrides };
}
export * from '#testing/captions-speech';
