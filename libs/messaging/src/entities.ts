import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { workspaceFilter } from '#libs/db';

/** Where a sent message stands: `sending` claims its Idempotency-Key while the provider is called; `sent` once it accepted it. */
export type MessageStatus = 'sending' | 'sent';

/** One message sent to one recipient through the messaging-provider connection (docs/messaging.md). */
export const MessagingMessage = defineEntity({
  name: 'MessagingMessage',
  tableName: 'messaging_message',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'idempotencyKey'] }],
  indexes: [{ properties: ['workspaceId', 'createdAt'] }],
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
    sentAt: p.datetime().nullable(),
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
