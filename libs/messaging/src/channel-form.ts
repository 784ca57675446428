import { validationFailed } from '#libs/core';
import { CONNECTABLE_CHANNELS, type ChannelAccount } from './channels.js';

/**
 * What connecting one messaging channel takes, as the dashboard's form (camelCase) and the CLI's
 * integration:connect flags (`--kebab-case`) both give it (docs/messaging.md "Connecting").
 */
export interface ChannelFields {
  /** primary_chat (WhatsApp Cloud API). */
  accessToken?: string;
  phoneNumberId?: string;
  wabaId?: string;
  displayNumber?: string;
  appSecret?: string;
  verifyToken?: string;
  /** sms (Twilio). */
  accountSid?: string;
  authToken?: string;
  messagingServiceSid?: string;
  /** sms (a number) and email (the sender). */
  from?: string;
  /** email (an SMTP relay). */
  smtpHost?: string;
  smtpPort?: number | string;
  smtpSecure?: boolean | string;
  smtpUser?: string;
  smtpPassword?: string;
  /** primary_chat and sms: the provider's API root when not its public one. */
  baseUrl?: string;
}

export type ChannelField = keyof ChannelFields | 'channel';

/**
 * One channel's account from its fields, or 422 naming every field missing or wrong, each under
 * `nameOf(field)` (the form's field, or the CLI's flag).
 */
export function channelAccountOf(channel: string, f: ChannelFields, nameOf: (field: ChannelField) => string = (x) => x): ChannelAccount {
  const errors: Record<string, string[]> = {};
  const need = (...names: (keyof ChannelFields)[]) => {
    for (const n of names) if (f[n] === undefined || f[n] === '') errors[nameOf(n)] = [`is required for the ${channel} channel`];
  };
  const text = (v: string | undefined) => (v === undefined || v === '' ? null : v);
  const baseUrl = text(f.baseUrl);
  if (baseUrl !== null) {
    let ok = false;
    try { ok = ['http:', 'https:'].includes(new URL(baseUrl).protocol); } catch { /* reported below */ }
    if (!ok) errors[nameOf('baseUrl')] = ['must be an absolute http(s) URL'];
  }
  let account: ChannelAccount | null = null;
  if (channel === 'primary_chat') {
    need('accessToken', 'phoneNumberId', 'wabaId');
    account = { channel, accessToken: f.accessToken!, phoneNumberId: f.phoneNumberId!, wabaId: f.wabaId!, displayNumber: text(f.displayNumber), baseUrl,
      appSecret: text(f.appSecret), verifyToken: text(f.verifyToken) };
  } else if (channel === 'sms') {
    need('accountSid', 'authToken');
    if (!f.from && !f.messagingServiceSid) errors[nameOf('from')] = [`a number (${nameOf('from')}) or ${nameOf('messagingServiceSid')} is required for the sms channel`];
    account = { channel, accountSid: f.accountSid!, authToken: f.authToken!, from: text(f.from), messagingServiceSid: text(f.messagingServiceSid), baseUrl };
  } else if (channel === 'email') {
    need('smtpHost', 'from');
    const secure = f.smtpSecure === undefined || f.smtpSecure === '' ? false : f.smtpSecure === true || f.smtpSecure === 'true' ? true : f.smtpSecure === false || f.smtpSecure === 'false' ? false : null;
    if (secure === null) errors[nameOf('smtpSecure')] = ['must be true or false'];
    const port = Number(f.smtpPort === undefined || f.smtpPort === '' ? (secure ? 465 : 587) : f.smtpPort);
    if (!Number.isInteger(port) || port < 1 || port > 65535) errors[nameOf('smtpPort')] = ['must be a port number'];
    if (baseUrl !== null) errors[nameOf('baseUrl')] = [`the email channel takes ${nameOf('smtpHost')} and ${nameOf('smtpPort')} instead`];
    account = { channel, host: f.smtpHost!, port, secure: secure ?? false, user: text(f.smtpUser), password: text(f.smtpPassword), from: f.from! };
  } else {
    errors[nameOf('channel')] = [`must be one of ${CONNECTABLE_CHANNELS.join(', ')}`];
  }
  if (Object.keys(errors).length || !account) throw validationFailed(errors, 'The channel account is incomplete');
  return account;
}
