/**
 * Every error code the API can answer with, and its HTTP status.
 * Section 7 of the contract, plus the house codes recorded in docs/decisions.md.
 */
export const ERROR_STATUS = {
  // §7
  INVALID_REQUEST: 400,
  NO_API_KEY: 401,
  INVALID_API_KEY: 401,
  TOKEN_EXPIRED: 401,
  INSUFFICIENT_SCOPE: 403,
  IP_NOT_ALLOWED: 403,
  ORG_SUSPENDED: 403,
  INSUFFICIENT_CREDITS: 402,
  LIMIT_QUEUE_DEPTH: 402,
  LIMIT_VIDEO_DURATION: 402,
  LIMIT_VIDEO_RESOLUTION: 402,
  LIMIT_VIDEO_FPS: 402,
  LIMIT_IMAGE_SIZE: 402,
  FEATURE_VIDEOENABLED: 402,
  FEATURE_WORKFLOWSENABLED: 402,
  LIMIT_WORKFLOWRUNS: 402,
  LIMIT_WORKFLOWMAXSTEPS: 402,
  LIMIT_WEBHOOKDELIVERIES: 402,
  LIMIT_APIREQUESTS: 402,
  LIMIT_INTEGRATION_NOT_ALLOWED: 402,
  TEMPLATE_NOT_FOUND: 404,
  TEMPLATE_NOT_OWNED: 403,
  TEMPLATE_NOT_PUBLISHED: 409,
  TEMPLATE_STALE: 409,
  ALREADY_SETTLED: 409,
  INVALID_CATEGORY: 422,
  NOT_PUBLISHABLE: 422,
  TEMPLATE_VALIDATION_FAILED: 422,
  EMPTY_TIMELINE: 422,
  INVALID_LIST_QUERY: 422,
  RATE_LIMIT_EXCEEDED: 429,
  ENGINE_NOT_CONFIGURED: 503,
  INTEGRATION_NOT_CONNECTED: 409,
  INTEGRATION_REAUTH_REQUIRED: 409,
  // house codes (docs/decisions.md)
  VALIDATION_FAILED: 422,
  LIMIT_APIKEYS: 402,
  SESSION_REQUIRED: 401,
  INVALID_TOKEN: 401,
  INVALID_OTP: 401,
  INVALID_REFRESH_TOKEN: 401,
  NOT_A_MEMBER: 403,
  ROLE_REQUIRED: 403,
  /** Test mode (issue 28): a test key or test-mode session acting on a live record (cancel, change, redeliver, delete). */
  LIVE_MODE_REQUIRED: 403,
  API_KEY_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** The connection sent no complete request in time (the HTTP server's request timeout). */
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  /** A path segment longer than the router reads (a path id of thousands of characters). */
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** The request line or headers are larger than the HTTP server reads. */
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  NOT_READY: 503,
  /** A dependency (the database or Redis: keys, limits, job queues) is down: nothing was changed; try again (Retry-After). */
  DEPENDENCY_UNAVAILABLE: 503,
  UNSUPPORTED_ASSET: 422,
  MEDIA_UNAVAILABLE: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RENDER_NOT_FOUND: 404,
  RENDER_TIMEOUT: 504,
  /** An edit that can never render (a clip the engine cannot draw, whatever worker tries): failed at once, naming the clip and the cause. */
  RENDER_FAILED: 422,
  /** A render whose worker died (a still after one lost worker, a video after two): it is not run again. */
  WORKER_LOST: 500,
  LIMIT_TEMPLATES: 402,
  ASSET_NOT_FOUND: 404,
  ASSET_READ_ONLY: 403,
  ASSET_TOO_LARGE: 413,
  LIMIT_STORAGE: 402,
  TRANSCRIPTION_NOT_FOUND: 404,
  /** workspace-suite: no spreadsheet of this id that the connected account can open. */
  SPREADSHEET_NOT_FOUND: 404,
  /** workspace-suite: no storage (Drive) file or folder of this id that the connected account can open. */
  FILE_NOT_FOUND: 404,
  /** A connected account's provider timed out, was rate-limited or failed (429/5xx): try again later (Retry-After). */
  PROVIDER_UNAVAILABLE: 503,
  /** A connected account's provider answered something this service cannot use (not the audio it asked for, over the size it reads). */
  PROVIDER_ERROR: 502,
  /** messaging-provider: the messaging provider refused this message (undeliverable number, invalid parameter), in its words. */
  MESSAGE_REJECTED: 422,
  /** messaging-provider: the connection holds no account for this channel; connect one (`integration:connect --channel`). */
  MESSAGING_CHANNEL_NOT_CONNECTED: 409,
  /** messaging-provider: the plan's messages this month are used up. */
  LIMIT_MESSAGES: 402,
  /** workflows: no workflow (or run of it) with this id in this workspace. */
  WORKFLOW_NOT_FOUND: 404,
  WORKFLOW_RUN_NOT_FOUND: 404,
  /** workflows: the run (or a run of the workflow) is still queued or running: cancel it or wait for it first. */
  WORKFLOW_RUN_ACTIVE: 409,
  /** messaging-provider: no campaign of this id in this workspace. */
  CAMPAIGN_NOT_FOUND: 404,
  /** A provider's status callback whose signature (or verify token) does not match the connected account's secret: nothing was recorded. */
  INVALID_SIGNATURE: 403,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** `errors` object of a 422/400: offending path → human messages. */
export type FieldErrors = Record<string, string[]>;

export interface PublishCheck {
  name: string;
  passed: boolean;
  message: string;
}

export interface ApiErrorExtras {
  errors?: FieldErrors;
  checks?: PublishCheck[];
  /** Extra response headers (Retry-After, X-RateLimit-*). */
  headers?: Record<string, string>;
  /** Payload for `data`; null unless a code documents otherwise. */
  data?: unknown;
}

/** The one error class of the service: a contract code, a human message and optional details. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extras: ApiErrorExtras = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

/**
 * 422 VALIDATION_FAILED (decisions.md "Envelope and errors"): a well-formed request whose values
 * break a rule, with `errors` by path and the first few of them in the message.
 */
export function validationFailed(errors: FieldErrors, lead = 'The request is not valid'): ApiError {
  const entries = Object.entries(errors);
  const shown = entries.slice(0, 3).map(([path, messages]) => `${path}: ${messages[0]}`).join('; ');
  return new ApiError('VALIDATION_FAILED', `${lead}: ${shown}${entries.length > 3 ? ` (and ${entries.length - 3} more)` : ''}`, { errors });
}

/** What the service cannot work without; named in a 503 DEPENDENCY_UNAVAILABLE's `data.dependency` and in readiness. */
export type Dependency = 'database' | 'redis' | 'storage';

/** Seconds a client waits before retrying a request refused because a dependency is down (Retry-After). */
export const DEPENDENCY_RETRY_AFTER_S = 5;

const DEPENDENCY_NAMES: Record<Dependency, string> = { database: 'The database', redis: 'Redis (keys, limits and job queues)', storage: 'The file storage' };

/**
 * 503 DEPENDENCY_UNAVAILABLE (decisions.md "HTTP and errors"): a dependency is down, the request
 * changed nothing, the client retries after `Retry-After` seconds.
 */
export function dependencyUnavailable(dependency: Dependency): ApiError {
  return new ApiError('DEPENDENCY_UNAVAILABLE', `${DEPENDENCY_NAMES[dependency]} is unavailable; nothing was changed. Try again shortly`, {
    data: { dependency },
    headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_S) },
  });
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, value);
}

export function assertUnreachable(value: never): never {
  throw new Error(`Unreachable: ${String(value)}`);
}
