import { randomBytes, randomUUID } from 'node:crypto';
import type { ChannelAccount } from './channels.js';
import type { MessageSender } from './sender.js';

/**
 * The sender of test mode (issue 28, docs/decisions.md "Test mode (issue 28): providers, messaging,
 * workflows"): chosen where the real adapter is (`MessagingService.sender`), it takes a message that
 * passed every check of live mode and answers a provider message id of the channel's own shape
 * (WhatsApp's `wamid.…`, Twilio's `SM` + 32 hex digits, an email Message-ID), calling nobody.
 */
export class SimulatedSender implements MessageSender {
  constructor(private readonly account: ChannelAccount) {}

  send(): Promise<{ providerMessageId: string }> {
    return Promise.resolve({ providerMessageId: simulatedMessageId(this.account) });
  }
}

/** A provider message id shaped like the channel provider's own. */
export function simulatedMessageId(account: ChannelAccount): string {
  if (account.channel === 'primary_chat') return `wamid.${randomBytes(30).toString('base64')}`;
  if (account.channel === 'sms') return `SM${randomBytes(16).toString('hex')}`;
  const domain = /@([^>\s]+)>?\s*$/.exec(account.from)?.[1] ?? 'localhost';
  return `<${randomUUID()}@${domain}>`;
}
