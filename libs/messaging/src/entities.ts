import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';

/**
 * Where a sent message stands: `sending` claims its Idempotency-Key while the provider is called; `sent`
 * once it accepted it; then `delivered`, `read` or `failed` as the provider's status callbacks say
 * (never backwards: STATUS_RANK).
 */
export type MessageStatus = 'sending' | 'sent' | 'delivered' | 'read' | 'failed';

/** One message sent to one recipient through the messaging-provider connection (docs/messaging.md). */
export const MessagingMessage = defineEntity({
  name: 'MessagingMessage',
  tableName: 'messaging_message',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'idempotencyKey'] }],
  indexes: [{ properties: ['workspaceId', 'createdAt'] }, { properties: ['workspaceId', 'providerMessageId'] }, { properties: ['workspaceId', 'allowanceAt'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    channel: p.string().length(16),
    accountId: p.string().length(64),
    /** The cleaned recipient: digits for phone channels, the address for email. */
    recipient: p.string().length(320),
    type: p.string().length(16),
    templateName: p.string().length(512).nullable(),
    languageCode: p.string().length(16).nullable(),
    renderId: p.string().length(32).nullable(),
    mediaUrl: p.text().nullable(),
    status: p.string().length(16).$type<MessageStatus>(),
    providerMessageId: p.string().length(200).nullable(),
    idempotencyKey: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    /**
     * When its unit of the monthly allowance was taken, which dates it to a month: its creation, or
     * for a campaign's message its campaign's acceptance (every recipient's unit is reserved then).
     */
    allowanceAt: p.datetime(),
    sentAt: p.datetime().nullable(),
    /** A `failed` status callback's reason, in the provider's words (with its code). */
    error: p.text().nullable(),
    /** When the last status callback moved it. */
    statusAt: p.datetime().nullable(),
    /** The sender's mode (a `pk_test_` key, a test session, a test campaign or workflow run): a test message is simulated, never sent. */
    mode: p.string().length(8).$type<KeyMode>().default('live'),
  },
});
export type MessagingMessage = InferEntity<typeof MessagingMessage>;

/** The workspace's own recipients list: every recipient of a sent message is upserted (docs/messaging.md "Contacts"). */
export const MessagingContact = defineEntity({
  name: 'MessagingContact',
  tableName: 'messaging_contact',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'waId'] }, { properties: ['workspaceId', 'email'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    /** The phone number in international form, digits only (WhatsApp's wa_id). */
    waId: p.string().length(16).nullable(),
    email: p.string().length(320).nullable(),
    name: p.string().length(200).nullable(),
    firstName: p.string().length(100).nullable(),
    lastName: p.string().length(100).nullable(),
    /** `,tag1,tag2,` (a LIKE finds one tag on both databases). */
    tagsText: p.string().length(1000),
    optedIn: p.boolean(),
    blocked: p.boolean(),
    /** Lower-cased name, number and email: what `search` matches. */
    searchText: p.string().length(700),
    lastMessagedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type MessagingContact = InferEntity<typeof MessagingContact>;

/** A campaign's life: `sending` while any recipient is queued or being sent; `completed` once none is. */
export type CampaignStatus = 'sending' | 'completed';

/** A broadcast (§4.5 "Broadcast"): one template to up to 5,000 recipients at `rateLimitPerSecond` (docs/messaging.md "Campaigns"). */
export const MessagingCampaign = defineEntity({
  name: 'MessagingCampaign',
  tableName: 'messaging_campaign',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'idempotencyKey'] }],
  indexes: [{ properties: ['workspaceId', 'createdAt'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    name: p.string().length(200),
    channel: p.string().length(16),
    templateName: p.string().length(512),
    languageCode: p.string().length(16).nullable(),
    renderId: p.string().length(32).nullable(),
    mediaUrl: p.text().nullable(),
    commonVariables: p.json<Record<string, string>>(),
    rateLimitPerSecond: p.integer(),
    total: p.integer(),
    status: p.string().length(16).$type<CampaignStatus>(),
    idempotencyKey: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    /** The creator's mode: a test campaign's recipients are simulated, never sent. */
    mode: p.string().length(8).$type<KeyMode>().default('live'),
  },
});
export type MessagingCampaign = InferEntity<typeof MessagingCampaign>;

/**
 * Where one recipient of a campaign stands: `queued` → `sending` (claimed by one runner) → `sent` |
 * `failed` (with the reason) | `unknown` (its worker died while the provider was being called: not
 * resent, docs/decisions.md); then `delivered`, `read` or `failed` from the provider's status callbacks.
 */
export type RecipientStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'read' | 'failed' | 'unknown';

export const CampaignRecipient = defineEntity({
  name: 'CampaignRecipient',
  tableName: 'messaging_campaign_recipient',
  filters: workspaceFilter(),
  uniques: [{ properties: ['campaignId', 'position'] }],
  indexes: [{ properties: ['campaignId', 'status'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    campaignId: p.string().length(32),
    /** Its index in the request's `recipients`. */
    position: p.integer(),
    /** As given; it is cleaned when sent (the send path's rules). */
    recipient: p.string().length(320),
    name: p.string().length(200).nullable(),
    variables: p.json<Record<string, string>>().nullable(),
    status: p.string().length(16).$type<RecipientStatus>(),
    /** Why it failed (or why its outcome is unknown): the API error's code and words. */
    errorCode: p.string().length(48).nullable(),
    reason: p.text().nullable(),
    providerMessageId: p.string().length(200).nullable(),
    messageId: p.string().length(32).nullable(),
    /** The runner that claimed it (its liveness key in Redis says whether it still runs). */
    claimedBy: p.string().length(64).nullable(),
    attempts: p.integer(),
    updatedAt: p.datetime(),
    sentAt: p.datetime().nullable(),
  },
});
export type CampaignRecipient = InferEntity<typeof CampaignRecipient>;
