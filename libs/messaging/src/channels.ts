import type { PlanCode } from '#libs/workspaces';

/** §4.5 List channels: every channel name the contract knows. */
export const CHANNEL_NAMES = ['primary_chat', 'sms', 'rcs', 'email', 'chat_b', 'chat_c', 'chat_d', 'chat_e', 'chat_f', 'webchat'] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
/** The channels this deployment has an adapter for (WhatsApp Cloud API, Twilio, SMTP). */
export const CONNECTABLE_CHANNELS = ['primary_chat', 'sms', 'email'] as const;
export type ConnectableChannel = (typeof CONNECTABLE_CHANNELS)[number];

export const MESSAGE_TYPES = ['template', 'text', 'image', 'video', 'document', 'audio', 'interactive'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
export const MEDIA_TYPES = ['image', 'video', 'document', 'audio'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];
export const INTERACTIVE_TYPES = ['button', 'list', 'cta_url'] as const;
export type InteractiveType = (typeof INTERACTIVE_TYPES)[number];

/** WhatsApp Business Cloud API: one phone number of one WhatsApp Business Account. */
export interface WhatsAppAccount {
  channel: 'primary_chat';
  accessToken: string;
  phoneNumberId: string;
  wabaId: string;
  displayNumber: string | null;
  baseUrl: string | null;
  /** The Meta app's secret: status webhooks are signed with it (X-Hub-Signature-256). */
  appSecret?: string | null;
  /** What Meta sends as hub.verify_token when the webhook is subscribed. */
  verifyToken?: string | null;
}

/** Twilio Messages API: a from number or a messaging service. */
export interface TwilioAccount {
  channel: 'sms';
  accountSid: string;
  authToken: string;
  from: string | null;
  messagingServiceSid: string | null;
  baseUrl: string | null;
}

/** An SMTP relay. */
export interface EmailAccount {
  channel: 'email';
  host: string;
  port: number;
  secure: boolean;
  user: string | null;
  password: string | null;
  from: string;
}

export type ChannelAccount = WhatsAppAccount | TwilioAccount | EmailAccount;

/** The sealed credentials of the messaging-provider connection: one account per channel. */
export type MessagingChannels = Partial<{ primary_chat: WhatsAppAccount; sms: TwilioAccount; email: EmailAccount }>;

/** §2 Messaging channel capabilities: what each adapter can send. */
export interface Capabilities {
  template: boolean;
  text: boolean;
  media: MediaType[];
  interactive: InteractiveType[];
}

export const CAPABILITIES: Record<ConnectableChannel, Capabilities> = {
  primary_chat: { template: true, text: true, media: ['image', 'video', 'document', 'audio'], interactive: ['button', 'list', 'cta_url'] },
  // Twilio MMS: MediaUrl carries a picture; video, documents and audio are not delivered everywhere.
  sms: { template: false, text: true, media: ['image'], interactive: [] },
  // Media go as a link in the email (never fetched by us into an attachment).
  email: { template: false, text: true, media: ['image', 'video', 'document', 'audio'], interactive: [] },
};

/** Can this channel carry this message type? */
export function carries(channel: ConnectableChannel, type: MessageType): boolean {
  const caps = CAPABILITIES[channel];
  if (type === 'template') return caps.template;
  if (type === 'text') return caps.text;
  if (type === 'interactive') return caps.interactive.length > 0;
  return caps.media.includes(type);
}

/** Messages a workspace may send a month through its connection, per plan (docs/decisions.md "Messaging"); null: unlimited. */
export const MESSAGES_PER_MONTH: Record<PlanCode, number | null> = {
  free: 0, starter: 1_000, pro: 10_000, business: 100_000, enterprise: null,
};

/** §8: reply buttons up to 3; list rows up to 10 overall. */
export const MAX_REPLY_BUTTONS = 3;
export const MAX_LIST_ROWS = 10;
/** §8: messaging lists up to 100. */
export const MAX_MESSAGING_LIMIT = 100;
export const DEFAULT_MESSAGING_LIMIT = 20;

/**
 * A phone number in international form, digits only: spaces, dashes, dots, brackets, a plus sign and
 * leading zeros (`00` international prefix, a trunk `0`) are cleaned. Null when what is left cannot
 * hold a country code and a subscriber number (under 10 digits or over 15, E.164).
 */
export function cleanPhoneNumber(raw: string): string | null {
  const stripped = raw.trim().replace(/[\s\-.()]/g, '').replace(/^\+/, '').replace(/^0+/, '');
  if (!/^\d+$/.test(stripped)) return null;
  if (stripped.length < 10 || stripped.length > 15) return null;
  return stripped;
}

const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+\.[^\s@<>(),;:"[\]]+$/;
export function isEmailAddress(raw: string): boolean {
  return raw.length <= 320 && EMAIL.test(raw);
}

const EXTENSIONS: Record<string, MediaType> = {
  jpg: 'image', jpeg: 'image', png: 'image', webp: 'image',
  mp4: 'video', '3gp': 'video',
  pdf: 'document', doc: 'document', docx: 'document', xls: 'document', xlsx: 'document', ppt: 'document', pptx: 'document', txt: 'document',
  mp3: 'audio', ogg: 'audio', aac: 'audio', amr: 'audio', m4a: 'audio', opus: 'audio',
};

/** A media URL's type, from its path's extension (what WhatsApp itself goes by); null when it has none we know. */
export function mediaTypeOfUrl(url: string): MediaType | null {
  let path: string;
  try { path = new URL(url).pathname; } catch { return null; }
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return ext ? (EXTENSIONS[ext] ?? null) : null;
}

/** The last path segment of a URL: a document's default filename. */
export function filenameOfUrl(url: string): string {
  try {
    const segment = new URL(url).pathname.split('/').filter(Boolean).pop();
    return segment ? decodeURIComponent(segment).slice(0, 240) : 'document';
  } catch {
    return 'document';
  }
}
