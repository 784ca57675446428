import { cleanPhoneNumber, filenameOfUrl, isEmailAddress, mediaTypeOfUrl } from './channels.js';
import { EmailAdapter, emailBodies } from './email.js';
import { bodyVariables, WhatsAppAdapter, whatsAppPayload } from './whatsapp.js';

// §4.5 "Send one message": the number cleaning, the media type of a URL, the {{n}} count and the wire shapes.

describe('messaging rules', () => {
  it('cleans spaces, dashes, brackets, a plus sign and leading zeros; refuses a number without a country code', () => {
    expect(cleanPhoneNumber('+44 7700 900123')).toBe('447700900123');
    expect(cleanPhoneNumber('0044 (7700) 900-123')).toBe('447700900123');
    expect(cleanPhoneNumber('+1 415.555.0142')).toBe('14155550142');
    expect(cleanPhoneNumber('07700 900')).toBeNull();
    expect(cleanPhoneNumber('555-0142')).toBeNull();
    expect(cleanPhoneNumber('+44 7700 900123 ext 4')).toBeNull();
    expect(cleanPhoneNumber('1234567890123456')).toBeNull();
  });

  it('email addresses; a URL\'s media type and filename from its path', () => {
    expect(isEmailAddress('ada@shop.test')).toBe(true);
    expect(isEmailAddress('ada@shop')).toBe(false);
    expect(isEmailAddress('a b@shop.test')).toBe(false);
    expect(mediaTypeOfUrl('https://cdn.test/a/b.JPG?x=1')).toBe('image');
    expect(mediaTypeOfUrl('https://cdn.test/clip.mp4')).toBe('video');
    expect(mediaTypeOfUrl('https://cdn.test/terms.pdf')).toBe('document');
    expect(mediaTypeOfUrl('https://cdn.test/jingle.ogg')).toBe('audio');
    expect(mediaTypeOfUrl('https://cdn.test/picture')).toBeNull();
    expect(filenameOfUrl('https://cdn.test/files/Invoice%20March.pdf?sig=1')).toBe('Invoice March.pdf');
  });

  it('counts the distinct {{n}} placeholders of a template body', () => {
    expect(bodyVariables('Hi {{1}}, code {{2}}; again {{1}} and {{ 3 }}')).toEqual(['1', '2', '3']);
    expect(bodyVariables('No variables')).toEqual([]);
  });

  it('WhatsApp shapes: audio has no caption, a document keeps its filename, a template without parameters has no components', () => {
    expect(whatsAppPayload({ to: '1', type: 'audio', media: { type: 'audio', url: 'https://x.test/a.mp3', caption: 'dropped' } })).toEqual({
      messaging_product: 'whatsapp', recipient_type: 'individual', to: '1', type: 'audio', audio: { link: 'https://x.test/a.mp3' },
    });
    expect(whatsAppPayload({ to: '1', type: 'document', media: { type: 'document', url: 'https://x.test/a.pdf', caption: 'c', filename: 'a.pdf' } })).toMatchObject({
      document: { link: 'https://x.test/a.pdf', caption: 'c', filename: 'a.pdf' },
    });
    expect(whatsAppPayload({ to: '1', type: 'template', template: { name: 'hello_world', language: 'en_US', variables: [] } })).toMatchObject({
      template: { name: 'hello_world', language: { code: 'en_US' } },
    });
    expect(JSON.stringify(whatsAppPayload({ to: '1', type: 'template', template: { name: 'hello_world', language: 'en_US', variables: [] } }))).not.toContain('components');
  });

  it('an email escapes the text into html and links media', () => {
    expect(emailBodies({ to: 'a@b.test', type: 'text', text: 'a <b>\n\nc' }).html).toBe('<p>a &#60;b&#62;</p>\n<p>c</p>');
    const image = emailBodies({ to: 'a@b.test', type: 'image', media: { type: 'image', url: 'https://x.test/p.png?a=1&b=2', caption: 'New' } });
    expect(image.html).toContain('<img src="https://x.test/p.png?a=1&#38;b=2" alt="New">');
    expect(image.text).toBe('New\n\nhttps://x.test/p.png?a=1&b=2');
  });

  it('production: an SMTP relay or an API base URL resolving to a private address is refused before any connection (stubbed resolver)', async () => {
    const lookup = async () => [{ address: '10.0.0.5', family: 4 }];
    const signal = new AbortController().signal;
    const email = new EmailAdapter({ channel: 'email', host: 'smtp.internal.test', port: 587, secure: false, user: null, password: null, from: 'a@b.test' }, { outboundPolicy: 'production', lookup });
    await expect(email.send({ to: 'a@b.test', type: 'text', text: 'x', subject: 's' }, signal)).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/10\.0\.0\.5, which is not a public address/) });
    const wa = new WhatsAppAdapter({ channel: 'primary_chat', accessToken: 'tok', phoneNumberId: '1', wabaId: '2', displayNumber: null, baseUrl: 'https://graph.internal.test' }, { outboundPolicy: 'production', lookup });
    await expect(wa.send({ to: '447700900123', type: 'text', text: 'x' }, signal)).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/not a public address/) });
  });
});
