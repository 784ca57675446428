import { createTransport } from 'nodemailer';
import { OutboundRefused, resolveOutbound } from '#libs/outbound';
import { ProviderError } from '#libs/integrations';
import type { EmailAccount } from './channels.js';
import { ChannelCheckFailed, MessageRejected, type AdapterOptions, type MessageSender, type OutgoingMessage } from './sender.js';

/**
 * email: an SMTP relay through nodemailer. The relay's host is SSRF-checked like any outbound URL and
 * the connection pinned to the checked address (TLS still verifies the host's name). Media go as a
 * link (an <img> for pictures), never fetched into an attachment. Failures: EAUTH / 535 → the grant
 * lapsed; no connection, timeouts, 4xx replies → unavailable; 5xx replies (550 no such mailbox) →
 * MessageRejected in the relay's words.
 */
const TIMEOUT_MS = 20_000;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The email's text and html bodies. */
export function emailBodies(m: OutgoingMessage): { text: string; html: string } {
  if (m.type === 'text') {
    const text = m.text ?? '';
    return { text, html: text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`).join('\n') };
  }
  const media = m.media!;
  const label = media.filename ?? media.url;
  const parts = [media.caption ? `<p>${escapeHtml(media.caption)}</p>` : ''];
  if (media.type === 'image') parts.push(`<p><img src="${escapeHtml(media.url)}" alt="${escapeHtml(media.caption ?? 'image')}"></p>`);
  parts.push(`<p><a href="${escapeHtml(media.url)}">${escapeHtml(label)}</a></p>`);
  return { text: [media.caption, media.url].filter(Boolean).join('\n\n'), html: parts.filter(Boolean).join('\n') };
}

export class EmailAdapter implements MessageSender {
  constructor(private readonly account: EmailAccount, private readonly options: AdapterOptions) {}

  /** A transport to the relay's checked address (the SSRF check of every outbound call), TLS verifying its name. */
  private async transport(): Promise<ReturnType<typeof createTransport>> {
    const { host, port, secure, user, password } = this.account;
    let address: string;
    try {
      address = (await resolveOutbound(`https://${host.includes(':') ? `[${host}]` : host}:${port}/`, this.options.outboundPolicy, this.options.lookup)).address;
    } catch (err) {
      if (err instanceof OutboundRefused) throw new ProviderError('unavailable', `email (SMTP) cannot be reached: ${err.message}`);
      throw err;
    }
    return createTransport({
      host: address, port, secure, tls: { servername: host },
      ...(user ? { auth: { user, pass: password ?? '' } } : {}),
      connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS,
    });
  }

  /**
   * The connect form's check (issue 29): connect, greet, and log in as a send would (nodemailer's
   * `verify`), sending nothing. Refused credentials are `auth`; a relay that cannot be reached or
   * talked to is on `smtpHost`, in the relay's (or the socket's) words.
   */
  async check(signal: AbortSignal): Promise<void> {
    let transport: ReturnType<typeof createTransport>;
    try {
      transport = await this.transport();
    } catch (err) {
      if (err instanceof ProviderError) throw new ChannelCheckFailed('smtpHost', err.message);
      throw err;
    }
    const onAbort = () => transport.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await transport.verify();
    } catch (err) {
      const failure = smtpFailure(err, [this.account.password, this.account.user]);
      if (failure instanceof ProviderError && failure.kind === 'auth') throw failure;
      throw new ChannelCheckFailed('smtpHost', failure.message);
    } finally {
      signal.removeEventListener('abort', onAbort);
      transport.close();
    }
  }

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<{ providerMessageId: string }> {
    const { user, password, from } = this.account;
    const transport = await this.transport();
    const onAbort = () => transport.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const info = await transport.sendMail({ from, to: message.to, subject: message.subject ?? '', ...emailBodies(message) });
      return { providerMessageId: info.messageId };
    } catch (err) {
      throw smtpFailure(err, [password, user]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      transport.close();
    }
  }
}

function smtpFailure(err: unknown, secrets: (string | null)[]): Error {
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  let words = (e.response ?? e.message ?? 'no reply').replace(/\s+/g, ' ').trim().slice(0, 300);
  for (const s of secrets) if (s && s.length >= 4) words = words.split(s).join('[redacted]');
  if (e.code === 'EAUTH' || e.responseCode === 535 || e.responseCode === 534) return new ProviderError('auth', `email (SMTP) refused the credentials: ${words}`, e.responseCode ?? null);
  if (e.responseCode !== undefined && e.responseCode >= 500) return new MessageRejected(`email (SMTP) rejected the message: ${words}`, String(e.responseCode));
  return new ProviderError('unavailable', `email (SMTP) is unavailable: ${words}`, e.responseCode ?? null);
}
