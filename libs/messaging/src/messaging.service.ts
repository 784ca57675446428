import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { ApiError, likeTerm, newId, validationFailed, type AppConfig, type FieldErrors, type KeyMode } from '#libs/core';
import { lockWorkspace, monthStart, type Plan } from '#libs/workspaces';
import { OutboundRefused, resolveOutbound } from '#libs/outbound';
import { forWorkspace, retryBusy, type Orm } from '#libs/db';
import { IDEMPOTENCY_KEY } from '#libs/renders';
import { ProviderError, type IntegrationConnection, type IntegrationsService, type UsableConnection } from '#libs/integrations';
import {
  CAPABILITIES, CHANNEL_NAMES, CONNECTABLE_CHANNELS, MAX_LIST_ROWS, MAX_REPLY_BUTTONS, MESSAGES_PER_MONTH, carries, cleanPhoneNumber,
  filenameOfUrl, isEmailAddress, mediaTypeOfUrl, type Capabilities, type ChannelAccount, type ChannelName, type ConnectableChannel,
  type MediaType, type MessageType, type MessagingChannels,
} from './channels.js';
import { EmailAdapter } from './email.js';
import { CampaignRecipient, MessagingCampaign, MessagingContact, MessagingMessage } from './entities.js';
import { ChannelCheckFailed, MessageRejected, type AdapterOptions, type InteractiveMessage, type MediaPart, type MessageSender, type OutgoingMessage, type ProviderTemplate } from './sender.js';
import { SimulatedSender } from './simulated.js';
import { TwilioAdapter } from './twilio.js';
import { WhatsAppAdapter } from './whatsapp.js';

export interface MessagingDeps {
  orm: Orm;
  integrations: IntegrationsService;
  /** A render of the workspace (404 RENDER_NOT_FOUND otherwise) and its output's URL (null until done, after expiry). */
  render: (workspaceId: string, id: string) => Promise<{ status: string; kind: string; format: string; url: string | null }>;
  config: Pick<AppConfig, 'env'>;
  /** The DNS lookup behind the SSRF checks (tests stub it). */
  lookup?: AdapterOptions['lookup'];
  /** Waits between attempts of a provider call that was unavailable (429, 5xx, timeout). */
  retryDelaysMs?: number[];
  /** One provider attempt's time limit (15 s unless set). */
  timeoutMs?: number;
  /** Where a provider posts a message's status (Twilio's StatusCallback); unset: none is asked for. */
  statusCallbackUrl?: (workspaceId: string, provider: 'twilio') => string;
}

/** What the recipients of one campaign share while they are checked: the provider's templates, the media already checked. */
export interface SendCache {
  templates?: ProviderTemplate[];
  media?: Map<string, { url: string }>;
}

/** A message checked by `prepare`, ready for `deliver`. */
export interface PreparedMessage {
  channel: ConnectableChannel;
  account: ChannelAccount;
  outgoing: OutgoingMessage;
  languageCode: string | null;
  mediaUrl: string | null;
  renderId: string | null;
}

export interface DeliverOptions {
  /**
   * A campaign recipient's: when the campaign was accepted, which reserved its unit of the allowance
   * then (it is not checked again, and counts in that month whenever it is sent).
   */
  reservedAt?: Date;
  /** Wraps each provider attempt, retries included (a campaign's rate limiter: RateLimiter.around). */
  around?: <T>(attempt: () => Promise<T>) => Promise<T>;
  /** Our reference the provider echoes in its status callbacks (WhatsApp's biz_opaque_callback_data). */
  reference?: string;
}

/** §2 Messaging channel. */
export interface ChannelView {
  id: string;
  channel: ChannelName;
  provider: string | null;
  label: string;
  identifier: string | null;
  isDefault: boolean;
  status: 'connected' | 'disconnected';
  capabilities: Capabilities;
}

/** §2 Messaging template. */
export interface TemplateView extends ProviderTemplate {
  usageCount: number;
}

/** §2 Messaging contact. */
export interface ContactView {
  id: string;
  waId: string | null;
  name: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  tags: string[];
  optedIn: boolean;
  blocked: boolean;
}

/** §2 Messaging allowance. */
export interface MessagingAllowance {
  plan: string;
  subscriptionStatus: string;
  active: boolean;
  rateLimitPerMinute: number;
  messages: { key: string; label: string; used: number; limit: number | null; unlimited: boolean; remaining: number | null; percentUsed: number };
}

/** A stored message as the API shows it. */
export interface MessageView {
  id: string;
  channel: string;
  accountId: string;
  to: string;
  type: string;
  templateName: string | null;
  languageCode: string | null;
  renderId: string | null;
  mediaUrl: string | null;
  status: string;
  providerMessageId: string | null;
  createdAt: string;
  sentAt: string | null;
  /** The sender's mode; `test`: the message was simulated (checked as in live mode, sent to no provider). */
  mode: KeyMode;
  simulated: boolean;
}

/** §4.5 Send one message (body), as the DTO parsed it. */
export interface SendInput {
  to: string;
  channel?: string;
  accountId?: string;
  type?: string;
  templateName?: string;
  languageCode?: string;
  renderId?: string;
  mediaUrl?: string;
  variables?: Record<string, string>;
  text?: string;
  subject?: string;
  caption?: string;
  interactive?: InteractiveMessage;
  headerFilename?: string;
}

export interface TemplateQuery { status: string; category?: string; language?: string; search?: string; accountId?: string; limit: number }
export interface ContactQuery { tag?: string; search?: string; limit: number; page: number }

const PROVIDERS: Record<ConnectableChannel, { provider: string; label: string }> = {
  primary_chat: { provider: 'whatsapp-cloud', label: 'WhatsApp Business' },
  sms: { provider: 'twilio', label: 'SMS (Twilio)' },
  email: { provider: 'smtp', label: 'Email (SMTP)' },
};
const NO_CAPABILITIES: Capabilities = { template: false, text: false, media: [], interactive: [] };
const HEADER_MEDIA: Record<string, MediaType> = { IMAGE: 'image', VIDEO: 'video', DOCUMENT: 'document' };
const RETRY_AFTER_SEC = '30';
/** How long a connect form's check may take. */
const CHECK_MS = 15_000;
const MAX_TEXT = 4096;
const MAX_CAPTION = 1024;

function isConnectable(channel: string): channel is ConnectableChannel {
  return (CONNECTABLE_CHANNELS as readonly string[]).includes(channel);
}

/** The channel account's id (a template's accountId, a message's): the sending number or address. */
export function accountIdOf(account: ChannelAccount): string {
  if (account.channel === 'primary_chat') return account.phoneNumberId;
  if (account.channel === 'sms') return account.messagingServiceSid ?? account.from ?? account.accountSid;
  return account.from;
}

function identifierOf(account: ChannelAccount): string | null {
  if (account.channel === 'primary_chat') return account.displayNumber ?? account.phoneNumberId;
  if (account.channel === 'sms') return account.from ?? account.messagingServiceSid;
  return account.from;
}

/**
 * The messaging-provider routes' service (§4.5, docs/messaging.md): channel accounts kept sealed in the
 * workspace's one messaging-provider connection, the channels' adapters (WhatsApp Cloud API, Twilio,
 * SMTP), the send rules, the stored messages and contacts, and the monthly allowance.
 */
export class MessagingService {
  constructor(private readonly deps: MessagingDeps) {}

  private adapterOptions(): AdapterOptions {
    return { outboundPolicy: this.deps.config.env === 'production' ? 'production' : 'development', lookup: this.deps.lookup, ...(this.deps.timeoutMs ? { timeoutMs: this.deps.timeoutMs } : {}) };
  }

  channelsOf(use: UsableConnection): MessagingChannels {
    return (use.credentials.channels ?? {}) as MessagingChannels;
  }

  /** A connection row's channel accounts, unsealed. */
  accountsOf(row: IntegrationConnection): MessagingChannels {
    return (this.deps.integrations.credentialsOf(row).channels ?? {}) as MessagingChannels;
  }

  /** Adds (or replaces) one channel's account in the workspace's messaging-provider connection; the other channels stay. */
  async connectChannel(workspaceId: string, account: ChannelAccount): Promise<IntegrationConnection> {
    const { row } = await this.deps.integrations.changeChannels(workspaceId, (channels) => ({ ...channels, [account.channel]: account }));
    return row!;
  }

  /**
   * The connect form's check (issue 29): one cheap read of the provider with this account (WhatsApp:
   * the phone number and the business account; Twilio: the account and the from number; SMTP: connect
   * and log in), sending nothing. Any other answer is 422 on the field it is about, in the provider's
   * words: refused credentials on the secret, a relay or API that cannot be reached on its address.
   * Answers who the account is, for the dashboard (WhatsApp's display number, Twilio's account name).
   */
  async checkChannel(account: ChannelAccount): Promise<ChannelAccount> {
    const signal = AbortSignal.timeout(CHECK_MS);
    const options = { ...this.adapterOptions(), timeoutMs: CHECK_MS };
    const secret = { primary_chat: 'accessToken', sms: 'authToken', email: 'smtpPassword' }[account.channel];
    const address = account.channel === 'email' ? 'smtpHost' : account.baseUrl ? 'baseUrl' : secret;
    try {
      if (account.channel === 'primary_chat') {
        const found = await new WhatsAppAdapter(account, options).check(signal);
        return { ...account, displayNumber: account.displayNumber ?? found.displayNumber };
      }
      if (account.channel === 'sms') await new TwilioAdapter(account, options).check(signal);
      else await new EmailAdapter(account, options).check(signal);
      return account;
    } catch (err) {
      if (err instanceof ChannelCheckFailed) throw validationFailed({ [err.field]: [`the provider answered: ${err.message}`] }, `${account.channel} did not pass the check`);
      if (!(err instanceof ProviderError)) throw err;
      if (err.kind === 'auth') throw validationFailed({ [secret]: [`the provider answered: ${err.message}`] }, `${account.channel} refused the credentials`);
      if (err.kind === 'unavailable') throw validationFailed({ [address]: [`the provider could not be checked: ${err.message}`] }, `${account.channel} could not be checked`);
      throw validationFailed({ [address]: [`the provider answered: ${err.message}`] }, `${account.channel} did not pass the check`);
    }
  }

  /** The channels the workspace's messaging-provider connection holds, without a secret: name and sending identity. */
  connectedChannels(row: IntegrationConnection): { channel: ConnectableChannel; identifier: string | null }[] {
    const accounts = this.accountsOf(row);
    return CONNECTABLE_CHANNELS.flatMap((channel) => {
      const account = accounts[channel];
      return account ? [{ channel, identifier: identifierOf(account) }] : [];
    });
  }

  /** The stored account of one connected channel (for its Test), or 409 MESSAGING_CHANNEL_NOT_CONNECTED. */
  async channelAccount(workspaceId: string, channel: ConnectableChannel): Promise<ChannelAccount> {
    const row = await this.deps.integrations.find(workspaceId, 'messaging-provider');
    const account = row ? this.accountsOf(row)[channel] : undefined;
    if (!account) throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', `The messaging-provider connection has no ${channel} account`);
    return account;
  }

  /** Removes one channel's account; the connection goes with its last channel. False when it had none. */
  async disconnectChannel(workspaceId: string, channel: ConnectableChannel): Promise<boolean> {
    const { changed } = await this.deps.integrations.changeChannels(workspaceId, (channels) => {
      if (!(channel in channels)) return undefined;
      const rest = { ...channels };
      delete rest[channel];
      return rest;
    });
    return changed;
  }

  /** §4.5 List channels: the connected ones (default), the contract's other names as `disconnected`, or both (`all`). */
  channels(use: UsableConnection, q: { channel?: string; status: string }): ChannelView[] {
    const accounts = this.channelsOf(use);
    const views = CHANNEL_NAMES.map((name): ChannelView => {
      const account = isConnectable(name) ? accounts[name] : undefined;
      if (account && isConnectable(name)) {
        return {
          id: `${name}:${accountIdOf(account)}`, channel: name, provider: PROVIDERS[name].provider, label: PROVIDERS[name].label,
          identifier: identifierOf(account), isDefault: true, status: 'connected', capabilities: CAPABILITIES[name],
        };
      }
      return {
        id: name, channel: name, provider: isConnectable(name) ? PROVIDERS[name].provider : null, label: isConnectable(name) ? PROVIDERS[name].label : name,
        identifier: null, isDefault: false, status: 'disconnected', capabilities: isConnectable(name) ? CAPABILITIES[name] : NO_CAPABILITIES,
      };
    });
    return views.filter((v) => (q.status === 'all' || v.status === q.status) && (!q.channel || v.channel === q.channel));
  }

  private account<C extends ConnectableChannel>(use: UsableConnection, channel: C): NonNullable<MessagingChannels[C]> {
    const account = this.channelsOf(use)[channel];
    if (!account) {
      throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', `The messaging-provider connection has no ${channel} account; connect one (integration:connect --provider messaging-provider --channel ${channel})`);
    }
    return account as NonNullable<MessagingChannels[C]>;
  }

  /**
   * The port: the channel's adapter in live mode; in test mode the simulated sender (simulated.ts), so
   * nothing a test key or a test-mode session sends (a message, a campaign, a workflow's step) reaches a provider.
   */
  private sender(account: ChannelAccount, mode: KeyMode): MessageSender {
    if (mode === 'test') return new SimulatedSender(account);
    if (account.channel === 'primary_chat') return new WhatsAppAdapter(account, this.adapterOptions());
    if (account.channel === 'sms') return new TwilioAdapter(account, this.adapterOptions());
    return new EmailAdapter(account, this.adapterOptions());
  }

  private async providerTemplates(use: UsableConnection): Promise<ProviderTemplate[]> {
    const adapter = new WhatsAppAdapter(this.account(use, 'primary_chat'), this.adapterOptions());
    return this.guard(use, (signal) => adapter.templates(signal));
  }

  /** §4.5 List messaging templates: the WhatsApp Business Account's, filtered here, with how often this workspace sent each. */
  async templates(workspaceId: string, use: UsableConnection, q: TemplateQuery): Promise<TemplateView[]> {
    const search = q.search?.toLowerCase();
    const found = (await this.providerTemplates(use)).filter((t) => t.status === q.status
      && (!q.category || t.category === q.category)
      && (!q.language || t.language === q.language)
      && (!q.accountId || t.accountId === q.accountId)
      && (!search || t.name.toLowerCase().includes(search))).slice(0, q.limit);
    const counts = new Map<string, number>();
    if (found.length) {
      const sent = await forWorkspace(this.deps.orm, workspaceId).find(MessagingMessage, { templateName: { $in: found.map((t) => t.name) }, status: 'sent' }, { fields: ['templateName', 'languageCode'] });
      for (const m of sent) counts.set(`${m.templateName}\u0000${m.languageCode}`, (counts.get(`${m.templateName}\u0000${m.languageCode}`) ?? 0) + 1);
    }
    return found.map((t) => ({ ...t, usageCount: counts.get(`${t.name}\u0000${t.language}`) ?? 0 }));
  }

  /** §4.5 List messaging contacts: the workspace's own list. */
  async contacts(workspaceId: string, q: ContactQuery): Promise<{ contacts: ContactView[]; total: number; page: number; pages: number }> {
    const and: object[] = [];
    if (q.tag) and.push({ tagsText: { $like: likeTerm(`,${q.tag.trim().toLowerCase()},`) } });
    if (q.search) and.push({ searchText: { $like: likeTerm(q.search.toLowerCase()) } });
    const [rows, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(MessagingContact, and.length ? { $and: and } : {}, {
      orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.limit, offset: (q.page - 1) * q.limit,
    });
    return { contacts: rows.map(contactView), total, page: q.page, pages: Math.ceil(total / q.limit) };
  }

  /** Adds contacts (the CLI's import), or updates those with the same number or email: name and tags. */
  async importContacts(workspaceId: string, entries: { to?: string; email?: string; name?: string; tags?: string[]; optedIn?: boolean }[]): Promise<{ imported: number; refused: { index: number; reason: string }[] }> {
    const refused: { index: number; reason: string }[] = [];
    let imported = 0;
    for (const [index, e] of entries.entries()) {
      const waId = e.to ? cleanPhoneNumber(e.to) : null;
      if (e.to && !waId) { refused.push({ index, reason: `"${e.to}" is not a number in international form` }); continue; }
      if (e.email && !isEmailAddress(e.email)) { refused.push({ index, reason: `"${e.email}" is not an email address` }); continue; }
      if (!waId && !e.email) { refused.push({ index, reason: 'needs `to` (a phone number) or `email`' }); continue; }
      await this.upsertContact(workspaceId, { waId, email: e.email ?? null, name: e.name ?? null, tags: e.tags ?? [], optedIn: e.optedIn ?? true, messaged: false });
      imported++;
    }
    return { imported, refused };
  }

  private async upsertContact(workspaceId: string, c: { waId: string | null; email: string | null; name: string | null; tags: string[]; optedIn: boolean; messaged: boolean }): Promise<void> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    const existing = await em.findOne(MessagingContact, c.waId ? { waId: c.waId } : { email: c.email });
    const now = new Date();
    if (existing) {
      const tags = [...new Set([...existing.tagsText.split(',').filter(Boolean), ...c.tags.map((t) => t.trim().toLowerCase()).filter(Boolean)])];
      const name = c.name ?? existing.name ?? null;
      em.assign(existing, { name, tagsText: `,${tags.join(',')},`, searchText: searchTextOf(name, existing.waId ?? null, existing.email ?? null), ...(c.messaged ? { lastMessagedAt: now } : {}) });
    } else {
      const [firstName, ...rest] = (c.name ?? '').trim().split(/\s+/).filter(Boolean);
      const tags = [...new Set(c.tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];
      em.create(MessagingContact, {
        id: newId('contact'), workspaceId, waId: c.waId, email: c.email, name: c.name, firstName: firstName ?? null, lastName: rest.length ? rest.join(' ') : null,
        tagsText: `,${tags.join(',')},`, optedIn: c.optedIn, blocked: false, searchText: searchTextOf(c.name, c.waId, c.email),
        lastMessagedAt: c.messaged ? now : null, createdAt: now,
      });
    }
    await em.flush();
  }

  /** §4.5 Check messaging allowance: the caller's mode's messages this calendar month (UTC), campaigns' reserved recipients included, against the plan's. */
  async usage(workspaceId: string, plan: Plan, mode: KeyMode): Promise<MessagingAllowance> {
    const used = await usedThisMonth(forWorkspace(this.deps.orm, workspaceId), mode);
    const limit = MESSAGES_PER_MONTH[plan.code];
    return {
      plan: plan.code, subscriptionStatus: 'active', active: plan.integrationsEnabled, rateLimitPerMinute: plan.ratePerMinute,
      messages: {
        key: 'messages', label: 'Messages this month', used, limit, unlimited: limit === null,
        remaining: limit === null ? null : Math.max(0, limit - used),
        percentUsed: limit === null || limit === 0 ? (limit === 0 ? 100 : 0) : Math.min(100, Math.round((used / limit) * 1000) / 10),
      },
    };
  }

  view(row: MessagingMessage): MessageView {
    return {
      id: row.id, channel: row.channel, accountId: row.accountId, to: row.recipient, type: row.type, templateName: row.templateName ?? null,
      languageCode: row.languageCode ?? null, renderId: row.renderId ?? null, mediaUrl: row.mediaUrl ?? null, status: row.status,
      providerMessageId: row.providerMessageId ?? null, createdAt: row.createdAt.toISOString(), sentAt: row.sentAt?.toISOString() ?? null,
      mode: row.mode, simulated: row.mode === 'test',
    };
  }

  /**
   * §4.5 Send one message: the body checked against the channel (422 naming the field, before any
   * send), the Idempotency-Key's message answered again instead of a second send (`replayed`), the
   * plan's allowance (402 LIMIT_MESSAGES), then the adapter (retried while unavailable), the stored
   * record and the recipient upserted into the contacts. A campaign's recipients go through the same
   * two halves (`prepare`, `deliver`).
   */
  async send(workspaceId: string, plan: Plan, mode: KeyMode, use: UsableConnection, input: SendInput, idempotencyKey: string | null): Promise<{ message: MessageView; replayed: boolean }> {
    if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) throw validationFailed({ 'headers.idempotency-key': ['must be 1 to 255 visible ASCII characters'] });
    // A campaign's recipient sends under its recipient id (campaigns.ts): a client key of that shape could pass for one.
    if (idempotencyKey?.startsWith('rcp_')) throw validationFailed({ 'headers.idempotency-key': ['must not start with rcp_ (kept for campaign recipients)'] });
    if (idempotencyKey) {
      const before = await forWorkspace(this.deps.orm, workspaceId).findOne(MessagingMessage, { idempotencyKey });
      if (before) return { message: this.view(before), replayed: true };
    }
    return this.deliver(workspaceId, plan, mode, use, await this.prepare(workspaceId, use, input), idempotencyKey);
  }

  /**
   * The checks of one message, sending nothing: 422 naming the field (or 404 for another workspace's
   * render). `cache` keeps the provider's templates and the media checked across the recipients of a campaign.
   */
  async prepare(workspaceId: string, use: UsableConnection, input: SendInput, cache: SendCache = {}): Promise<PreparedMessage> {
    const channel = input.channel ?? 'primary_chat';
    const type = (input.type ?? 'template') as MessageType;
    if (!isConnectable(channel)) throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', `No ${channel} account can be connected on this deployment (primary_chat, sms and email can)`);
    const account = this.account(use, channel);
    const errors: FieldErrors = {};
    const fail = (field: string, why: string) => { (errors[field] ??= []).push(why); };
    if (!carries(channel, type)) fail('type', `the ${channel} channel cannot carry ${type} messages (it carries ${describe(CAPABILITIES[channel])})`);
    if (input.accountId !== undefined && input.accountId !== accountIdOf(account)) fail('accountId', `is not a sending identity of the ${channel} channel (${accountIdOf(account)} is)`);
    let to: string | null;
    if (channel === 'email') {
      to = isEmailAddress(input.to.trim()) ? input.to.trim().toLowerCase() : null;
      if (!to) fail('to', 'must be an email address on the email channel');
      if (!input.subject?.trim()) fail('subject', 'is required on the email channel');
    } else {
      to = cleanPhoneNumber(input.to);
      if (!to) fail('to', 'must be a phone number in international form with its country code (e.g. +44 7700 900123)');
    }
    if (input.caption !== undefined && type === 'audio') fail('caption', 'audio has no caption');
    if (input.caption !== undefined && input.caption.length > MAX_CAPTION) fail('caption', `must be at most ${MAX_CAPTION} characters`);
    if (Object.keys(errors).length) throw validationFailed(errors);

    const outgoing: OutgoingMessage = { to: to!, type, ...(channel === 'email' ? { subject: input.subject!.trim() } : {}) };
    let languageCode: string | null = null;
    let mediaUrl: string | null = null;
    if (type === 'template') {
      const t = await this.pickTemplate(use, input, cache);
      languageCode = t.language;
      const format = t.headerFormat ? HEADER_MEDIA[t.headerFormat] : undefined;
      let header: MediaPart | undefined;
      if (format) {
        const media = await this.media(workspaceId, input, format, `the template's approved header is ${t.headerFormat}`, cache);
        mediaUrl = media.url;
        header = { type: format, url: media.url, ...(format === 'document' ? { filename: input.headerFilename ?? filenameOfUrl(media.url) } : {}) };
      } else if (input.mediaUrl !== undefined || input.renderId !== undefined) {
        throw validationFailed({ [input.mediaUrl !== undefined ? 'mediaUrl' : 'renderId']: [`template ${t.name} has no media header (${t.headerFormat ?? 'none'})`] });
      }
      outgoing.template = { name: t.name, language: t.language, ...(header ? { header } : {}), variables: positional(input.variables, t.bodyVariableCount) };
    } else if (type === 'text') {
      if (!input.text?.trim()) throw validationFailed({ text: ['is required for type text'] });
      if (input.text.length > MAX_TEXT) throw validationFailed({ text: [`must be at most ${MAX_TEXT} characters`] });
      outgoing.text = input.text;
    } else if (type === 'interactive') {
      outgoing.interactive = checkInteractive(input.interactive);
    } else {
      const media = await this.media(workspaceId, input, type as MediaType, `the message's type is ${type}`, cache);
      mediaUrl = media.url;
      outgoing.media = {
        type: type as MediaType, url: media.url,
        ...(input.caption ? { caption: input.caption } : {}),
        ...(type === 'document' ? { filename: input.headerFilename ?? filenameOfUrl(media.url) } : {}),
      };
    }
    return { channel, account, outgoing, languageCode, mediaUrl, renderId: input.renderId ?? null };
  }

  /**
   * Messages of `mode` this month, with the units campaigns still hold, against the plan's allowance:
   * 402 LIMIT_MESSAGES when `adding` more would pass it. `em`: the workspace's, or the transaction
   * that holds its lock (the deciding check, with the insert it allows).
   */
  async checkAllowance(em: EntityManager, plan: Plan, mode: KeyMode, adding = 1): Promise<void> {
    const limit = MESSAGES_PER_MONTH[plan.code];
    if (limit === null) return;
    const used = await usedThisMonth(em, mode);
    if (used + adding > limit) {
      throw new ApiError('LIMIT_MESSAGES', adding === 1
        ? `The ${plan.name} plan's ${limit} messages this month are used up; upgrade or wait for next month`
        : `The ${plan.name} plan allows ${limit} messages this month and ${used} are used: ${adding} more do not fit; upgrade or send fewer`);
    }
  }

  /**
   * Sends a prepared message once: the allowance checked and the message row (`sending`) inserted in
   * one step under the workspace's lock (a campaign recipient's unit was reserved with its campaign);
   * the row claims the Idempotency-Key before the provider is called (a twin finds it and is answered
   * with it: `replayed`); the mode's sender (`sender`: the provider's adapter, or the simulation in
   * test mode; unavailable ones retried, `around` wraps each attempt); the stored record and, in live
   * mode, the contact. A failed send deletes the row, so the key can be used again.
   */
  async deliver(workspaceId: string, plan: Plan, mode: KeyMode, use: UsableConnection, prepared: PreparedMessage, idempotencyKey: string | null, opts: DeliverOptions = {}): Promise<{ message: MessageView; replayed: boolean }> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    const { channel, account, outgoing } = prepared;
    const to = outgoing.to;
    const id = newId('message');
    const createdAt = new Date();
    const fields = {
      id, workspaceId, channel, accountId: accountIdOf(account), recipient: to, type: outgoing.type, templateName: outgoing.template?.name ?? null,
      languageCode: prepared.languageCode, renderId: prepared.renderId, mediaUrl: prepared.mediaUrl, status: 'sending' as const, providerMessageId: null, idempotencyKey,
      createdAt, allowanceAt: opts.reservedAt ?? createdAt, sentAt: null, error: null, statusAt: null, mode,
    };
    try {
      if (opts.reservedAt) {
        em.create(MessagingMessage, fields);
        await em.flush();
      } else {
        // The allowance and the row it allows in one step, under the workspace's lock: parallel sends at the last unit cannot both pass the count.
        await retryBusy(() => em.fork().transactional(async (tx) => {
          await lockWorkspace(tx, workspaceId);
          await this.checkAllowance(tx, plan, mode);
          tx.create(MessagingMessage, fields);
          await tx.flush();
        }));
      }
    } catch (err) {
      if (!idempotencyKey || !(err instanceof UniqueConstraintViolationException)) throw err;
      const twin = await forWorkspace(this.deps.orm, workspaceId).findOne(MessagingMessage, { idempotencyKey });
      if (!twin) throw err;
      return { message: this.view(twin), replayed: true };
    }
    let sent: { providerMessageId: string };
    try {
      const adapter = this.sender(account, mode);
      const message: OutgoingMessage = {
        ...outgoing,
        ...(opts.reference ? { reference: opts.reference } : {}),
        ...(channel === 'sms' && this.deps.statusCallbackUrl ? { statusCallback: this.deps.statusCallbackUrl(workspaceId, 'twilio') } : {}),
      };
      sent = await this.guard(use, (signal) => adapter.send(message, signal), opts.around);
    } catch (err) {
      await em.nativeDelete(MessagingMessage, { id });
      throw err;
    }
    // `sent` only from `sending`: a status callback that came first (found by its reference) may have moved it on.
    const moved = await em.nativeUpdate(MessagingMessage, { id, status: 'sending' }, { status: 'sent', providerMessageId: sent.providerMessageId, sentAt: new Date() });
    if (!moved) await em.nativeUpdate(MessagingMessage, { id }, { providerMessageId: sent.providerMessageId });
    const row = await em.fork().findOneOrFail(MessagingMessage, { id });
    // A simulated message reached no one: it adds nobody to the contacts.
    if (mode === 'test') return { message: this.view(row), replayed: false };
    const contact = { waId: channel === 'email' ? null : to, email: channel === 'email' ? to : null, name: null, tags: [], optedIn: true, messaged: true };
    try {
      await this.upsertContact(workspaceId, contact);
    } catch (err) {
      // A concurrent send to the same new recipient inserted it first: update that row (the message is sent either way).
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      await this.upsertContact(workspaceId, contact);
    }
    return { message: this.view(row), replayed: false };
  }

  /** The template a send names: known (422), in one language or the one asked for (422), approved (422). */
  private async pickTemplate(use: UsableConnection, input: SendInput, cache: SendCache): Promise<ProviderTemplate> {
    if (!input.templateName?.trim()) throw validationFailed({ templateName: ['is required for template messages'] });
    cache.templates ??= await this.providerTemplates(use);
    const named = cache.templates.filter((t) => t.name === input.templateName);
    if (!named.length) throw validationFailed({ templateName: [`no template named "${input.templateName}" on the connected WhatsApp Business Account`] });
    const languages = named.map((t) => t.language);
    let chosen: ProviderTemplate | undefined;
    if (input.languageCode !== undefined) {
      chosen = named.find((t) => t.language === input.languageCode);
      if (!chosen) throw validationFailed({ languageCode: [`template ${input.templateName} exists in ${languages.join(', ')}, not ${input.languageCode}`] });
    } else if (named.length > 1) {
      throw validationFailed({ languageCode: [`is required: template ${input.templateName} exists in several languages (${languages.join(', ')})`] });
    } else {
      chosen = named[0]!;
    }
    if (chosen.status !== 'APPROVED') throw validationFailed({ templateName: [`template ${chosen.name} (${chosen.language}) is ${chosen.status}, not APPROVED`] });
    return chosen;
  }

  /**
   * The media of a message: `mediaUrl` (taking precedence; SSRF rules; its type from its extension) or
   * a finished render of this workspace (404 RENDER_NOT_FOUND otherwise), of the type `want`.
   */
  private async media(workspaceId: string, input: SendInput, want: MediaType, because: string, cache: SendCache): Promise<{ url: string }> {
    const key = `${want}\u0000${input.mediaUrl ?? ''}\u0000${input.renderId ?? ''}`;
    const known = cache.media?.get(key);
    if (known) return known;
    const media = await this.checkMedia(workspaceId, input, want, because);
    (cache.media ??= new Map()).set(key, media);
    return media;
  }

  private async checkMedia(workspaceId: string, input: SendInput, want: MediaType, because: string): Promise<{ url: string }> {
    if (input.mediaUrl !== undefined) {
      try {
        await resolveOutbound(input.mediaUrl, this.adapterOptions().outboundPolicy, this.deps.lookup);
      } catch (err) {
        if (err instanceof OutboundRefused) throw validationFailed({ mediaUrl: [err.message] });
        throw err;
      }
      const got = mediaTypeOfUrl(input.mediaUrl);
      if (!got) throw validationFailed({ mediaUrl: [`its type cannot be told from its path; ${because}: use a URL ending in the file's extension (.jpg, .png, .mp4, .pdf, .mp3…)`] });
      if (got !== want) throw validationFailed({ mediaUrl: [`is ${got === 'image' ? 'an' : 'a'} ${got}; ${because}`] });
      return { url: input.mediaUrl };
    }
    if (input.renderId !== undefined) {
      const render = await this.deps.render(workspaceId, input.renderId);
      const url = render.url;
      if (render.status !== 'done' || !url) throw validationFailed({ renderId: [`is ${render.status}${render.status === 'done' ? ' but its output has expired' : ''}; send a finished render`] });
      const got: MediaType = render.format === 'pdf' ? 'document' : render.kind === 'video' && render.format === 'mp4' ? 'video' : 'image';
      if (render.format === 'gif' || got !== want) throw validationFailed({ renderId: [`is a ${render.format} ${render.kind} render; ${because}`] });
      return { url };
    }
    throw validationFailed({ mediaUrl: [`a mediaUrl or a renderId is required: ${because}`] });
  }

  /** One provider call with its failures as the API's answers; unavailable ones retried after the configured waits. */
  private async guard<T>(use: UsableConnection, work: (signal: AbortSignal) => Promise<T>, around?: <R>(attempt: () => Promise<R>) => Promise<R>): Promise<T> {
    const delays = this.deps.retryDelaysMs ?? [500, 2000];
    for (let attempt = 0; ; attempt++) {
      try {
        const once = () => work(new AbortController().signal);
        return await (around ? around(once) : once());
      } catch (err) {
        if (err instanceof MessageRejected) {
          throw new ApiError('MESSAGE_REJECTED', err.message, { data: { providerCode: err.providerCode } });
        }
        if (!(err instanceof ProviderError)) throw err;
        if (err.kind === 'unavailable' && attempt < delays.length) {
          await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
          continue;
        }
        if (err.kind === 'auth') {
          await this.deps.integrations.markLapsed(use.connection.id, err.message);
          throw new ApiError('INTEGRATION_REAUTH_REQUIRED', `The messaging-provider account refused this workspace's grant (${err.message}); connect it again`);
        }
        if (err.kind === 'unavailable') throw new ApiError('PROVIDER_UNAVAILABLE', `${err.message}; try again shortly`, { headers: { 'Retry-After': RETRY_AFTER_SEC } });
        throw new ApiError('PROVIDER_ERROR', err.message);
      }
    }
  }
}

/**
 * The allowance's use this month in one mode (docs/decisions.md "Test mode (issue 28): providers,
 * messaging, workflows"): the messages stored (sending ones too: their row claims the unit before the
 * provider is called), and the units still reserved by that mode's campaigns: their queued recipients
 * and the claimed ones whose message row is not written yet. A recipient that fails or is sent
 * releases its reservation (it is no longer queued; a sent one counts as its message).
 */
async function usedThisMonth(em: EntityManager, mode: KeyMode): Promise<number> {
  // The recipients first, the messages last: runners move on while these statements run (each sees
  // what is committed when it runs), and a recipient only ever moves towards having its message row
  // (queued → sending → its row → sent), so read in this order it is counted at least once (twice at
  // worst, refusing a send too early, never too late); a row deleted meanwhile is a failed send, whose
  // unit is free again.
  // Dated by acceptance: a campaign accepted last month and still sending reserved its units then.
  const start = monthStart();
  const campaigns = (await em.find(MessagingCampaign, { status: 'sending', mode, createdAt: { $gte: start } }, { fields: ['id'] })).map((c) => c.id);
  let reserved = 0;
  if (campaigns.length) {
    const queued = await em.count(CampaignRecipient, { campaignId: { $in: campaigns }, status: 'queued' });
    const claimed = (await em.find(CampaignRecipient, { campaignId: { $in: campaigns }, status: 'sending' }, { fields: ['id'] })).map((r) => r.id);
    const written = claimed.length ? await em.count(MessagingMessage, { idempotencyKey: { $in: claimed } }) : 0;
    reserved = queued + claimed.length - written;
  }
  return reserved + (await em.count(MessagingMessage, { allowanceAt: { $gte: start }, mode }));
}

function describe(c: Capabilities): string {
  const kinds = [c.template ? 'template' : '', c.text ? 'text' : '', ...c.media, c.interactive.length ? 'interactive' : ''].filter(Boolean);
  return kinds.join(', ');
}

function searchTextOf(name: string | null, waId: string | null, email: string | null): string {
  return [name, waId, email].filter(Boolean).join(' ').toLowerCase().slice(0, 700);
}

function contactView(r: MessagingContact): ContactView {
  return {
    id: r.id, waId: r.waId ?? null, name: r.name ?? null, firstName: r.firstName ?? null, lastName: r.lastName ?? null, email: r.email ?? null,
    tags: r.tagsText.split(',').filter(Boolean), optedIn: r.optedIn, blocked: r.blocked,
  };
}

/** Body variables by slot ("1".."n"), filled positionally; exactly the template's count. */
function positional(variables: Record<string, string> | undefined, count: number): string[] {
  const given = variables ?? {};
  const keys = Object.keys(given);
  const wanted = Array.from({ length: count }, (_, i) => String(i + 1));
  const missing = wanted.filter((k) => !given[k]?.trim());
  const extra = keys.filter((k) => !wanted.includes(k));
  if (missing.length || extra.length) {
    const why = [missing.length ? `missing slot${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` : '', extra.length ? `unknown slot${extra.length > 1 ? 's' : ''} ${extra.join(', ')}` : ''].filter(Boolean).join('; ');
    throw validationFailed({ variables: [`the template has ${count} body variable${count === 1 ? '' : 's'} (${wanted.join(', ') || 'none'}): ${why}`] });
  }
  return wanted.map((k) => given[k]!);
}

/** §4.5 interactive: its shape per type; reply buttons up to 3 and list rows up to 10 overall (§8). */
function checkInteractive(i: InteractiveMessage | undefined): InteractiveMessage {
  const errors: FieldErrors = {};
  const fail = (field: string, why: string) => { (errors[field] ??= []).push(why); };
  if (!i) throw validationFailed({ interactive: ['is required for type interactive'] });
  if (!i.body?.text?.trim()) fail('interactive.body.text', 'is required');
  const a = i.action ?? {};
  if (i.type === 'button') {
    const buttons = a.buttons ?? [];
    if (!buttons.length) fail('interactive.action.buttons', 'needs at least one reply button');
    if (buttons.length > MAX_REPLY_BUTTONS) fail('interactive.action.buttons', `at most ${MAX_REPLY_BUTTONS} reply buttons (got ${buttons.length})`);
    buttons.forEach((b, n) => { if (!b?.id || !b?.title) fail(`interactive.action.buttons.${n}`, 'needs an id and a title'); });
  } else if (i.type === 'list') {
    const rows = (a.sections ?? []).flatMap((s) => s?.rows ?? []);
    if (!a.button?.trim()) fail('interactive.action.button', "is required (the list's menu button text)");
    if (!rows.length) fail('interactive.action.sections', 'needs at least one row');
    if (rows.length > MAX_LIST_ROWS) fail('interactive.action.sections', `at most ${MAX_LIST_ROWS} rows overall (got ${rows.length})`);
    rows.forEach((r, n) => { if (!r?.id || !r?.title) fail(`interactive.action.sections.rows.${n}`, 'needs an id and a title'); });
  } else if (i.type === 'cta_url') {
    if (!a.displayText?.trim()) fail('interactive.action.displayText', 'is required');
    let ok = false;
    try { ok = ['https:', 'http:'].includes(new URL(a.url ?? '').protocol); } catch { /* reported below */ }
    if (!ok) fail('interactive.action.url', 'must be an absolute http(s) URL');
  } else {
    fail('interactive.type', 'must be button, list or cta_url');
  }
  if (Object.keys(errors).length) throw validationFailed(errors);
  return i;
}
