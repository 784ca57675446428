import type { ProviderCallOptions } from '#libs/integrations';
import type { InteractiveType, MediaType, MessageType } from './channels.js';

/** §4.5 interactive: {type, body: {text}, header?, footer?, action}, checked by the service before an adapter sees it. */
export interface InteractiveMessage {
  type: InteractiveType;
  body: { text: string };
  header?: { type: 'text'; text: string };
  footer?: { text: string };
  action: {
    /** button: up to 3 reply buttons. */
    buttons?: { id: string; title: string }[];
    /** list: the menu button's text and its sections (rows up to 10 overall). */
    button?: string;
    sections?: { title?: string; rows: { id: string; title: string; description?: string }[] }[];
    /** cta_url: the link button. */
    displayText?: string;
    url?: string;
  };
}

export interface MediaPart {
  type: MediaType;
  url: string;
  caption?: string;
  /** Documents: the name the recipient sees. */
  filename?: string;
}

/** One message, checked, as an adapter sends it. */
export interface OutgoingMessage {
  /** Digits for phone channels, the address for email. */
  to: string;
  type: MessageType;
  template?: { name: string; language: string; header?: MediaPart; variables: string[] };
  text?: string;
  media?: MediaPart;
  interactive?: InteractiveMessage;
  /** Email only. */
  subject?: string;
  /** WhatsApp: echoed back in the message's status webhooks (`biz_opaque_callback_data`). */
  reference?: string;
  /** Twilio: where it posts the message's status (`StatusCallback`). */
  statusCallback?: string;
}

/** A message template of the provider (§2 Messaging template, without our usage count). */
export interface ProviderTemplate {
  id: string;
  accountId: string;
  name: string;
  category: string;
  language: string;
  status: string;
  /** IMAGE, VIDEO, DOCUMENT, TEXT or LOCATION; null without a header. */
  headerFormat: string | null;
  bodyVariableCount: number;
  variables: string[];
}

/** The provider refused this message (a bad number, an invalid parameter): its words and its code. */
export class MessageRejected extends Error {
  constructor(message: string, readonly providerCode: string | null) {
    super(message);
    this.name = 'MessageRejected';
  }
}

export type AdapterOptions = Pick<ProviderCallOptions, 'outboundPolicy' | 'lookup' | 'timeoutMs'>;

/** A channel's adapter: sends one message, answering the provider's message id. */
export interface MessageSender {
  send(message: OutgoingMessage, signal: AbortSignal): Promise<{ providerMessageId: string }>;
}

/**
 * A connect form's check the provider did not pass, on the form's field it is about (`phoneNumberId`,
 * `wabaId`, `accountSid`, `from`, `smtpHost`…): answered 422 on that field with the provider's words.
 */
export class ChannelCheckFailed extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'ChannelCheckFailed';
  }
}
