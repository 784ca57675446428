import { EVENT_TYPES, type EventType, type KeyMode } from '#libs/core';

/** Event names of contract §6 (libs/core events.ts). */
export const WEBHOOK_EVENTS = EVENT_TYPES;
export type WebhookEvent = EventType;

/** Subscription of an endpoint registered through the key-authenticated route without `events` (§6). */
export const DEFAULT_EVENTS: readonly WebhookEvent[] = ['render.completed', 'render.failed', 'render.cancelled'];

/** The modes an endpoint's `modes` may hold; a live caller's endpoint takes both unless told otherwise. */
export const EVENT_MODES: readonly KeyMode[] = ['live', 'test'];

export const HTTP_METHODS = ['POST', 'PUT', 'PATCH', 'GET'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const BODY_FORMATS = ['json', 'form', 'multipart', 'none'] as const;
export type BodyFormat = (typeof BODY_FORMATS)[number];

export const PAYLOAD_MODES = ['default', 'custom'] as const;
export type PayloadMode = (typeof PAYLOAD_MODES)[number];

export interface HeaderPair {
  key: string;
  value: string;
}

/** What a delivery needs to know about the endpoint (or the workspace callback) it goes to. */
export interface EndpointConfig {
  id: string;
  url: string;
  method: HttpMethod;
  bodyFormat: BodyFormat;
  payloadMode: PayloadMode;
  payloadTemplate?: string | null;
  headers: HeaderPair[];
  secret: string;
}

/** Contract §2 "Event envelope"; also the default payload. */
export interface EventEnvelope {
  /** `evt_…` */
  id: string;
  type: string;
  /** ISO 8601 */
  created: string;
  /** false for an event of a test-mode record (issue 28). Envelopes stored before it existed were all live. */
  livemode: boolean;
  data: Record<string, unknown>;
}

export interface DeliveryContext {
  orgId: string;
  endpointId: string;
  /** Starting at 1. */
  attempt: number;
  /** Unix seconds; the value signed and sent as X-Service-Timestamp. */
  timestamp: number;
  /** A test delivery: adds `X-Service-Test: true`. */
  test?: boolean;
}
