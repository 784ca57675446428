import { metrics } from '#libs/core';
import { OutboundError, OutboundRefused, requestPinned, resolveOutbound, type FileBody } from '#libs/outbound';

/**
 * Why a call to a connected account's provider failed:
 * - `auth`: the provider refuses the credentials (401/403, a revoked key, `invalid_grant`): the
 *   connection is marked (`markLapsed`) and callers answer 409 INTEGRATION_REAUTH_REQUIRED;
 * - `unavailable`: timeout, connection refused, 429 or 5xx: worth retrying later;
 * - `rejected`: the provider refuses this request (other 4xx, a failed job), in its own words.
 */
export type ProviderFailureKind = 'auth' | 'unavailable' | 'rejected';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    message: string,
    /** The provider's HTTP status, when there was an answer. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** What every provider call needs besides its request: the credentials to scrub, the outbound rules, the budget. */
export interface ProviderCallOptions {
  /** A connection's credentials, as unsealed for one call: only used here to keep them out of messages. */
  credentials: { apiKey?: string; accessToken?: string };
  /** development allows loopback/private targets (decisions.md "Running it"); production refuses them. */
  outboundPolicy: 'development' | 'production';
  /** The whole conversation's budget (every request and wait); DEFAULT_TIMEOUT_MS when absent. */
  timeoutMs?: number;
  /** The DNS lookup behind the SSRF check (tests stub it); the system resolver by default. */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

/** The whole conversation's budget unless the options say otherwise. */
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** One small call (create a job, poll it) gets at most this much of the budget; `long` calls get all of it. */
const SHORT_CALL_MS = 30_000;
/** Answers other than results (errors, job handles, lists) are read up to this size. */
const SMALL_ANSWER_BYTES = 1024 * 1024;
/** Longest provider message kept in an error. */
const MAX_MESSAGE_CHARS = 300;

export interface ProviderRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** A path under the provider's base URL, with its query. */
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: Buffer | FileBody;
  /** Uploads, synthesis and synchronous recognition may use all the time left; other calls at most SHORT_CALL_MS. */
  long?: boolean;
  maxResponseBytes?: number;
  /** A 2xx answer's body goes to this file as it arrives (requestPinned `saveTo`); `savedBytes` is its size. */
  saveTo?: string;
}

export interface ProviderAnswer {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** With `saveTo` and a 2xx answer: the bytes written to the file. */
  savedBytes?: number;
}

/** A provider's refusal as its own body words it: the message, and the kind when the HTTP status alone does not tell it. */
export type ErrorReader = (status: number, body: unknown) => { message?: string; kind?: ProviderFailureKind };

/** What the HTTP status of a refusal means. */
export function kindOfStatus(status: number): ProviderFailureKind {
  if (status === 401 || status === 403) return 'auth';
  // Redirects (never followed: a provider's API does not move) count with timeouts and 5xx.
  if (status < 400 || status === 408 || status === 429 || status >= 500) return 'unavailable';
  return 'rejected';
}

/**
 * One conversation with a connected account's provider (a transcription, a voice-over): every
 * request SSRF-checked and connected to the checked address (`resolveOutbound` + `requestPinned`),
 * no redirect followed, all of them inside one deadline, answers capped, aborted at once by the
 * signal (rejecting with its reason), and every failure a ProviderError whose message never holds a
 * credential. `subject` names what a `rejected` refusal refused ("the recording", "the request").
 */
export class ProviderCall {
  private readonly budgetMs: number;
  private readonly deadline: number;
  private readonly secrets: string[];
  private readonly verbs: Record<ProviderFailureKind, string>;

  constructor(
    readonly provider: string,
    private readonly baseUrl: string,
    private readonly options: ProviderCallOptions,
    readonly signal: AbortSignal,
    private readonly readError: ErrorReader,
    subject = 'the request',
  ) {
    this.budgetMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.deadline = Date.now() + this.budgetMs;
    this.secrets = [options.credentials.apiKey, options.credentials.accessToken].filter((s): s is string => !!s && s.length >= 4);
    this.verbs = { auth: 'refused the credentials', unavailable: 'is unavailable', rejected: `rejected ${subject}` };
  }

  /** A failure of this call, worded for the caller's error (credentials scrubbed, trimmed). */
  failure(kind: ProviderFailureKind, detail: string, status: number | null = null): ProviderError {
    let text = detail.replace(/\s+/g, ' ').trim();
    for (const secret of this.secrets) text = text.split(secret).join('[redacted]');
    if (text.length > MAX_MESSAGE_CHARS) text = `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
    return new ProviderError(kind, `${this.provider} ${text}`, status);
  }

  /** The refusal an HTTP answer stands for, in the provider's own words. */
  refusal(answer: Pick<ProviderAnswer, 'status' | 'body'>): ProviderError {
    const body = parseJson(answer.body);
    const read = this.readError(answer.status, body);
    const kind = read.kind ?? kindOfStatus(answer.status);
    const message = read.message?.trim() || answer.body.toString('utf8', 0, 2000).trim() || 'no message';
    return this.failure(kind, `${this.verbs[kind]} (HTTP ${answer.status}): ${message}`, answer.status);
  }

  /** Stops here if the caller aborted. */
  checkAborted(): void {
    if (this.signal.aborted) throw abortReason(this.signal);
  }

  /** Time left in the whole budget, in ms. */
  remainingMs(): number {
    return this.deadline - Date.now();
  }

  timedOut(): ProviderError {
    return this.failure('unavailable', `did not finish within ${duration(this.budgetMs)}`);
  }

  /** One request; any status is returned (redirects included, never followed). */
  async send(req: ProviderRequest): Promise<ProviderAnswer> {
    // Metrics (issue 30): each request by provider and outcome (the answer's status class, or why there was none).
    let outcome = 'error';
    try {
      const answer = await this.sendOnce(req);
      outcome = `${Math.floor(answer.status / 100)}xx`;
      return answer;
    } catch (err) {
      outcome = err instanceof ProviderError ? (err.status ? `${Math.floor(err.status / 100)}xx` : err.kind) : this.signal.aborted ? 'aborted' : 'error';
      throw err;
    } finally {
      metrics().providerCalls.inc({ provider: this.provider, outcome });
    }
  }

  private async sendOnce(req: ProviderRequest): Promise<ProviderAnswer> {
    this.checkAborted();
    if (this.remainingMs() <= 0) throw this.timedOut();
    const query = req.query?.toString();
    const url = `${this.baseUrl.replace(/\/+$/, '')}${req.path}${query ? `?${query}` : ''}`;
    let target;
    try {
      target = await resolveOutbound(url, this.options.outboundPolicy, this.options.lookup);
    } catch (err) {
      // The URL may carry a key in its query: its text is never repeated, only the refusal.
      if (err instanceof OutboundRefused) throw this.failure('unavailable', `cannot be reached: ${err.message.startsWith('"') ? 'its base URL is not an absolute URL' : err.message}`);
      throw err;
    }
    this.checkAborted();
    const left = this.remainingMs();
    const timeoutMs = Math.max(1, req.long ? left : Math.min(left, SHORT_CALL_MS));
    const cap = req.maxResponseBytes ?? SMALL_ANSWER_BYTES;
    try {
      const res = await requestPinned({
        target,
        method: req.method ?? 'GET',
        headers: { 'user-agent': 'media-render/1.0', accept: 'application/json', ...req.headers },
        body: req.body ?? null,
        timeoutMs,
        maxResponseBytes: cap + 1,
        signal: this.signal,
        saveTo: req.saveTo,
        // A provider's API answers many small reads: they keep their connection (requestPinned).
        keepAlive: true,
      });
      if (res.truncated) throw this.failure('rejected', `answered more than ${Math.round(cap / 1024 / 1024)} MB, more than this service reads`, res.status);
      return { status: res.status, headers: res.headers, body: res.body, ...(res.savedBytes !== undefined ? { savedBytes: res.savedBytes } : {}) };
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      if (err.kind === 'aborted') throw abortReason(this.signal);
      if (err.kind === 'timeout') throw timeoutMs >= left ? this.timedOut() : this.failure('unavailable', `did not answer within ${duration(timeoutMs)}`);
      throw this.failure('unavailable', `could not be reached: ${err.message}`);
    }
  }

  /** One request whose answer must be a 2xx JSON body; anything else is a ProviderError. */
  async json<T>(req: ProviderRequest): Promise<T> {
    const answer = await this.send(req);
    if (answer.status < 200 || answer.status >= 300) throw this.refusal(answer);
    const body = parseJson(answer.body);
    if (body === undefined || body === null || typeof body !== 'object') {
      throw this.failure('unavailable', `answered HTTP ${answer.status} with something that is not JSON`, answer.status);
    }
    return body as T;
  }

  /** The wait between two polls; stops at once on abort, and fails when the budget cannot hold it. */
  wait(ms: number): Promise<void> {
    this.checkAborted();
    if (this.remainingMs() <= ms) return Promise.reject(this.timedOut());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(this.signal));
      };
      const timer = setTimeout(() => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function duration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return `${Math.round(ms / 100) / 10} s`;
  return `${ms} ms`;
}

/** A string field of an unknown JSON value, if it is one. */
export function stringAt(value: unknown, ...path: string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === 'string' ? current : undefined;
}
