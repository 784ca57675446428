import { createHmac } from 'node:crypto';
import { movesForward } from './campaigns.js';
import { twilioSignature, twilioStatus, whatsAppSignature, whatsAppStatuses } from './status-callbacks.js';

// docs/messaging.md "Status callbacks": the providers' signatures, their payloads, and the forward-only rule.

describe('status callbacks', () => {
  it('Twilio\'s signature: HMAC-SHA1 of the URL and the sorted parameters, base64 (Twilio\'s own worked example)', () => {
    // https://www.twilio.com/docs/usage/security#validating-requests: auth token 12345, this URL and these parameters.
    const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    expect(twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('Meta\'s signature: sha256= and the hex HMAC-SHA256 of the raw bytes with the app secret', () => {
    const raw = Buffer.from('{"object":"whatsapp_business_account"}');
    expect(whatsAppSignature('s3cret', raw)).toBe(`sha256=${createHmac('sha256', 's3cret').update(raw).digest('hex')}`);
  });

  it('reads WhatsApp statuses (with the reference and the error) and ignores the rest of the webhook', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [{ id: '1', changes: [
        { field: 'messages', value: { messages: [{ from: '447700900123', id: 'wamid.IN', type: 'text' }] } },
        { field: 'messages', value: { statuses: [
          { id: 'wamid.A', status: 'delivered', timestamp: '1764230400', recipient_id: '447700900123', biz_opaque_callback_data: 'rcp_1' },
          { id: 'wamid.B', status: 'failed', timestamp: '1764230401', errors: [{ code: 131047, title: 'Re-engagement message', error_data: { details: 'More than 24 hours' } }] },
          { id: 'wamid.C', status: 'deleted' },
          { status: 'read' },
        ] } },
      ] }],
    };
    expect(whatsAppStatuses(body)).toEqual([
      { providerMessageId: 'wamid.A', status: 'delivered', reference: 'rcp_1', error: null, at: new Date(1764230400_000) },
      { providerMessageId: 'wamid.B', status: 'failed', reference: null, error: 'Re-engagement message: More than 24 hours (code 131047)', at: new Date(1764230401_000) },
    ]);
    expect(whatsAppStatuses({ entry: 'x' })).toEqual([]);
    expect(whatsAppStatuses(null)).toEqual([]);
  });

  it('reads Twilio statuses: undelivered is failed; queued and sending are not recorded', () => {
    expect(twilioStatus({ MessageSid: 'SM1', MessageStatus: 'delivered' })).toEqual({ providerMessageId: 'SM1', status: 'delivered', error: null });
    expect(twilioStatus({ MessageSid: 'SM1', MessageStatus: 'undelivered', ErrorCode: '30003' })).toEqual({ providerMessageId: 'SM1', status: 'failed', error: 'Twilio reported undelivered (code 30003)' });
    expect(twilioStatus({ MessageSid: 'SM1', MessageStatus: 'queued' })).toBeNull();
    expect(twilioStatus({ MessageStatus: 'sent' })).toBeNull();
  });

  it('statuses only move forward; failed ends what was not yet delivered; duplicates change nothing', () => {
    expect(movesForward('sending', 'sent')).toBe(true);
    expect(movesForward('unknown', 'sent')).toBe(true);
    expect(movesForward('sent', 'delivered')).toBe(true);
    expect(movesForward('delivered', 'read')).toBe(true);
    expect(movesForward('read', 'delivered')).toBe(false);
    expect(movesForward('delivered', 'sent')).toBe(false);
    expect(movesForward('sent', 'sent')).toBe(false);
    expect(movesForward('sent', 'failed')).toBe(true);
    expect(movesForward('delivered', 'failed')).toBe(false);
    expect(movesForward('failed', 'read')).toBe(false);
  });
});
