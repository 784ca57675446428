import type { RedisOptions } from 'ioredis';

/** What differs between the processes that compose the services (PROCESS_ROLES). */
export interface ProcessRole {
  /** Names the process's Redis connection in CLIENT LIST (`media-render:<name>`). */
  name: string;
  /** Over createRedis's defaults. */
  redis?: RedisOptions;
  /** Where sign-in codes go: the configured SMS provider, or only the development outbox (the default). */
  sms?: 'provider' | 'outbox';
  /**
   * The job queues (libs/queue QueueModule) and the services built on them (renders, captions,
   * workflows, campaigns): `producer` only adds jobs and fails fast while Redis is down (the API),
   * `worker` also consumes them. None: a process with no queue (the CLI) opens no queue connection.
   */
  queues?: 'producer' | 'worker';
}

/** The three composition roots side by side: where they differ, they differ here. */
export const PROCESS_ROLES = {
  /** A request that needs Redis while it is down is refused within about a second (one retry; 503 DEPENDENCY_UNAVAILABLE). */
  api: { name: 'api', redis: { maxRetriesPerRequest: 1 }, sms: 'provider', queues: 'producer' },
  worker: { name: 'worker', queues: 'worker' },
  /** An operator's command fails fast when Redis is down (one retry, not three) and texts no one (`otp:last` reads the outbox). */
  cli: { name: 'cli', redis: { maxRetriesPerRequest: 1 }, sms: 'outbox' },
} satisfies Record<string, ProcessRole>;
