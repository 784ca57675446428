import { createHmac, timingSafeEqual } from 'node:crypto';
import { buildDelivery } from './build.js';
import { generateSecret, secretHint } from './secret.js';
import { signPayload, signRequest, verifyRequestSignature, verifySignature } from './sign.js';
import { TemplateRefused } from './template.js';
import type { DeliveryContext, EndpointConfig, EventEnvelope } from './types.js';

const secret = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const event: EventEnvelope = {
  id: 'evt_01HXAMPLE',
  type: 'render.completed',
  created: '2026-03-01T10:00:00.000Z', livemode: true,
  data: { id: 'rnd_1', status: 'done', url: 'https://cdn.example.com/r.mp4', duration: 12.5, title: 'Quote " and\r\nnewline', meta: { w: 1920, tags: ['x'] }, expiresAt: null },
};
const ctx: DeliveryContext = { orgId: 'org_7', endpointId: 'whk_9', attempt: 2, timestamp: 1_772_359_200 };
const endpoint = (over: Partial<EndpointConfig> = {}): EndpointConfig => ({
  id: 'whk_9', url: 'https://hooks.example.com/in', method: 'POST', bodyFormat: 'json', payloadMode: 'default', headers: [], secret, ...over,
});

/** The receiver's check written from §6 alone: HMAC-SHA256(secret, "<timestamp>.<raw body>"), hex, "sha256=" prefix. */
function receiverAccepts(headers: Record<string, string>, body: Buffer | null, key = secret): boolean {
  const header = headers['X-Service-Signature'];
  const timestamp = headers['X-Service-Timestamp'];
  if (!header?.startsWith('sha256=') || Math.abs(Number(timestamp) - ctx.timestamp) > 300) return false;
  const expected = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${timestamp}.`), body ?? Buffer.alloc(0)])).digest();
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Splits a multipart body on its boundary into {name: value}, checking the framing on the way. */
function parseMultipart(body: Buffer, contentType: string): Record<string, string> {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error('no boundary');
  const text = body.toString('utf8');
  expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  const sections = text.split(`--${boundary}`);
  expect(sections[0]).toBe('');
  expect(sections.at(-1)).toBe('--\r\n');
  const fields: Record<string, string> = {};
  for (const section of sections.slice(1, -1)) {
    expect(section.startsWith('\r\n') && section.endsWith('\r\n')).toBe(true);
    const [head, ...rest] = section.slice(2, -2).split('\r\n\r\n');
    const name = /^Content-Disposition: form-data; name="([^"]*)"$/.exec(head)?.[1];
    if (name === undefined) throw new Error(`bad part head ${head}`);
    fields[name] = rest.join('\r\n\r\n');
  }
  return fields;
}

describe('building a delivery', () => {
  it('sends the envelope as JSON by default, signed over the exact bytes', () => {
    const req = buildDelivery(endpoint(), event, ctx);
    expect(req.url).toBe('https://hooks.example.com/in');
    expect(req.method).toBe('POST');
    expect(req.contentType).toBe('application/json');
    expect(JSON.parse(req.body!.toString('utf8'))).toEqual({ id: event.id, type: event.type, created: event.created, livemode: true, data: event.data });
    expect(req.headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'service-webhooks/1.0',
      'X-Service-Event': 'render.completed',
      'X-Service-Livemode': 'true',
      'X-Service-Timestamp': '1772359200',
      'X-Service-Attempt': '2',
      'X-Service-Signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'X-Service-Signature-V2': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });
    expect(receiverAccepts(req.headers, req.body)).toBe(true);
    expect(receiverAccepts(req.headers, req.body, `${secret}x`)).toBe(false);
    expect(receiverAccepts(req.headers, Buffer.concat([req.body!, Buffer.from(' ')]))).toBe(false);
  });

  it('carries the event\'s mode: livemode in the envelope {id, type, created, livemode, data} and X-Service-Livemode, which no configured header replaces (issue 28)', () => {
    const test = buildDelivery(endpoint({ headers: [{ key: 'x-service-livemode', value: 'true' }] }), { ...event, livemode: false }, ctx);
    const body = JSON.parse(test.body!.toString('utf8'));
    expect(Object.keys(body)).toEqual(['id', 'type', 'created', 'livemode', 'data']);
    expect(body.livemode).toBe(false);
    expect(Object.entries(test.headers).filter(([k]) => k.toLowerCase() === 'x-service-livemode')).toEqual([['X-Service-Livemode', 'false']]);
    expect(receiverAccepts(test.headers, test.body)).toBe(true);
    // A GET delivery has no body: the header alone says it.
    expect(buildDelivery(endpoint({ method: 'GET', bodyFormat: 'none' }), { ...event, livemode: false }, ctx).headers['X-Service-Livemode']).toBe('false');
    // An envelope stored before events carried their mode (a redelivery of an old event): every such event was live.
    const { livemode: _, ...old } = event;
    const redelivered = buildDelivery(endpoint(), old as EventEnvelope, ctx);
    expect(JSON.parse(redelivered.body!.toString('utf8')).livemode).toBe(true);
    expect(redelivered.headers['X-Service-Livemode']).toBe('true');
    // {{event.livemode}}: a boolean as a whole value, text inside a longer one.
    const custom = buildDelivery(endpoint({
      url: 'https://hooks.example.com/in?live={{event.livemode}}', payloadMode: 'custom', payloadTemplate: '{"live": "{{event.livemode}}", "text": "live={{event.livemode}}"}',
    }), { ...event, livemode: false }, ctx);
    expect(custom.url).toBe('https://hooks.example.com/in?live=false');
    expect(JSON.parse(custom.body!.toString('utf8'))).toEqual({ live: false, text: 'live=false' });
  });

  it('renders a custom template into the body, URL and header values', () => {
    const req = buildDelivery(endpoint({
      url: 'https://hooks.example.com/{{org.id}}/{{event.type}}?render={{data.id}}',
      payloadMode: 'custom',
      payloadTemplate: '{"text": "Render {{data.id}} is {{data.status}}: {{data.title}}", "render": "{{data}}", "eventId": "{{event.id}}", "gone": "{{data.nope}}"}',
      headers: [{ key: 'Authorization', value: 'Bearer t-{{org.id}}' }, { key: 'X-Endpoint', value: '{{endpoint.id}}' }],
    }), event, ctx);
    expect(req.url).toBe('https://hooks.example.com/org_7/render.completed?render=rnd_1');
    expect(JSON.parse(req.body!.toString('utf8'))).toEqual({
      text: 'Render rnd_1 is done: Quote " and\r\nnewline', render: event.data, eventId: event.id, gone: null,
    });
    expect(req.headers.Authorization).toBe('Bearer t-org_7');
    expect(req.headers['X-Endpoint']).toBe('whk_9');
    expect(Object.keys(req.headers).slice(0, 2)).toEqual(['Authorization', 'X-Endpoint']);
    expect(receiverAccepts(req.headers, req.body)).toBe(true);
  });

  it('encodes form bodies with one field per top-level key, nested values as JSON text and null as empty', () => {
    const req = buildDelivery(endpoint({ bodyFormat: 'form', method: 'PUT' }), event, ctx);
    expect(req.contentType).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.body!.toString('utf8'));
    expect([...form.keys()]).toEqual(['id', 'type', 'created', 'livemode', 'data']);
    expect(form.get('type')).toBe('render.completed');
    expect(JSON.parse(form.get('data')!)).toEqual(event.data);

    const custom = buildDelivery(endpoint({ bodyFormat: 'form', payloadMode: 'custom', payloadTemplate: '{"n": "{{data.duration}}", "t": "{{data.title}}", "m": "{{data.meta}}", "x": "{{data.expiresAt}}", "a & b": "c=d"}' }), event, ctx);
    const fields = Object.fromEntries(new URLSearchParams(custom.body!.toString('utf8')));
    expect(fields).toEqual({ n: '12.5', t: 'Quote " and\r\nnewline', m: '{"w":1920,"tags":["x"]}', x: '', 'a & b': 'c=d' });
    expect(receiverAccepts(custom.headers, custom.body)).toBe(true);
  });

  it('encodes multipart bodies with one part per top-level key, exact bytes signed', () => {
    const req = buildDelivery(endpoint({ bodyFormat: 'multipart', method: 'PATCH', payloadMode: 'custom', payloadTemplate: '{"id": "{{data.id}}", "meta": "{{data.meta}}", "title": "{{data.title}}", "none": "{{data.expiresAt}}", "q\\"k": "é"}' }), event, ctx);
    expect(req.contentType).toMatch(/^multipart\/form-data; boundary=service-webhooks-[0-9a-f]{32}$/);
    expect(req.headers['Content-Type']).toBe(req.contentType);
    expect(parseMultipart(req.body!, req.contentType!)).toEqual({ id: 'rnd_1', meta: '{"w":1920,"tags":["x"]}', title: 'Quote " and\r\nnewline', none: '', 'q%22k': 'é' });
    expect(receiverAccepts(req.headers, req.body)).toBe(true);
    // The boundary depends on the event and attempt only, so a rebuilt attempt is byte-identical.
    expect(buildDelivery(endpoint({ bodyFormat: 'multipart' }), event, ctx).contentType).toBe(buildDelivery(endpoint({ bodyFormat: 'multipart' }), event, ctx).contentType);
    expect(buildDelivery(endpoint({ bodyFormat: 'multipart' }), event, { ...ctx, attempt: 3 }).contentType).not.toBe(req.contentType);
  });

  it('sends GET and bodyFormat none without a body or content type', () => {
    for (const over of [{ method: 'GET' as const, bodyFormat: 'json' as const }, { method: 'POST' as const, bodyFormat: 'none' as const }]) {
      const req = buildDelivery(endpoint({ ...over, payloadMode: 'custom', payloadTemplate: '{"a": 1}' }), event, ctx);
      expect(req.body).toBeNull();
      expect(req.contentType).toBeNull();
      expect(Object.keys(req.headers).map((h) => h.toLowerCase())).not.toContain('content-type');
    }
  });

  it('issue 28: a GET delivery\'s X-Service-Signature covers its method, path and query (a changed query fails); POST keeps §6\'s `<timestamp>.<raw body>`', () => {
    const url = 'https://hooks.example.com/in?event={{event.type}}&render={{data.id}}';
    const get = buildDelivery(endpoint({ url, method: 'GET' }), event, ctx);
    const target = '/in?event=render.completed&render=rnd_1';
    const v2 = `sha256=${createHmac('sha256', secret).update(`${ctx.timestamp}.GET.${target}.`).digest('hex')}`;
    expect(get.headers['X-Service-Signature']).toBe(v2);
    expect(get.headers['X-Service-Signature-V2']).toBe(v2);
    const check = (t: string, header = get.headers['X-Service-Signature']) => verifyRequestSignature(secret, header, ctx.timestamp, { method: 'GET', target: t, body: '' }, ctx.timestamp);
    expect(check(target)).toBe(true);
    expect(check('/in?event=render.completed&render=rnd_2')).toBe(false);
    expect(check('/in?event=render.failed&render=rnd_1')).toBe(false);
    expect(check('/other?event=render.completed&render=rnd_1')).toBe(false);
    expect(verifyRequestSignature(secret, v2, ctx.timestamp, { method: 'POST', target, body: '' }, ctx.timestamp)).toBe(false);
    // The contract's string (the timestamp alone for a GET) no longer verifies: a forged query cannot ride on it.
    expect(receiverAccepts(get.headers, null)).toBe(false);

    // POST, PUT and PATCH: X-Service-Signature stays §6's; V2 adds the method, path and query.
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      const req = buildDelivery(endpoint({ url, method }), event, ctx);
      expect(receiverAccepts(req.headers, req.body)).toBe(true);
      expect(req.headers['X-Service-Signature-V2']).toBe(signRequest(secret, ctx.timestamp, method, target, req.body!));
      expect(verifyRequestSignature(secret, req.headers['X-Service-Signature-V2'], ctx.timestamp, { method, target: '/in?event=render.completed&render=rnd_9', body: req.body! }, ctx.timestamp)).toBe(false);
    }
    // bodyFormat none on POST: §6's empty body; V2 covers the query.
    const none = buildDelivery(endpoint({ url, bodyFormat: 'none' }), event, ctx);
    expect(receiverAccepts(none.headers, null)).toBe(true);
    expect(verifyRequestSignature(secret, none.headers['X-Service-Signature-V2'], ctx.timestamp, { method: 'POST', target, body: '' }, ctx.timestamp)).toBe(true);
  });

  it('never lets a configured header replace a managed one, whatever its case', () => {
    const req = buildDelivery(endpoint({
      headers: [
        { key: 'x-service-signature', value: 'sha256=forged' },
        { key: 'X-SERVICE-EVENT', value: 'payment.captured' },
        { key: 'x-service-test', value: 'true' },
        { key: 'user-agent', value: 'evil' },
        { key: 'content-type', value: 'text/plain' },
        { key: 'X-Custom', value: 'kept' },
      ],
    }), event, ctx);
    const lower = Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]);
    expect(lower.filter(([k]) => k === 'x-service-signature')).toHaveLength(1);
    expect(req.headers['X-Service-Event']).toBe('render.completed');
    expect(req.headers['User-Agent']).toBe('service-webhooks/1.0');
    expect(req.headers['Content-Type']).toBe('application/json');
    expect(lower.map(([k]) => k)).not.toContain('x-service-test');
    expect(req.headers['X-Custom']).toBe('kept');
    expect(Object.keys(req.headers).sort()).toEqual([
      'Content-Type', 'User-Agent', 'X-Custom', 'X-Service-Attempt', 'X-Service-Event', 'X-Service-Livemode',
      'X-Service-Signature', 'X-Service-Signature-V2', 'X-Service-Timestamp',
    ]);
    expect(receiverAccepts(req.headers, req.body)).toBe(true);
  });

  it('marks test deliveries', () => {
    expect(buildDelivery(endpoint(), event, { ...ctx, test: true }).headers['X-Service-Test']).toBe('true');
  });

  it('refuses a header value that resolves to a line break, and a custom mode without a template', () => {
    expect(() => buildDelivery(endpoint({ headers: [{ key: 'X-Title', value: '{{data.title}}' }] }), event, ctx)).toThrow(TemplateRefused);
    expect(() => buildDelivery(endpoint({ payloadMode: 'custom' }), event, ctx)).toThrow(TemplateRefused);
  });
});

describe('signatures', () => {
  it('sign `<timestamp>.<raw body>` and verify within five minutes only', () => {
    const body = Buffer.from('{"a":"é"}');
    const sig = signPayload(secret, 1000, body);
    expect(sig).toBe(`sha256=${createHmac('sha256', secret).update('1000.').update(body).digest('hex')}`);
    expect(signPayload(secret, 1000, '{"a":"é"}')).toBe(sig);
    expect(verifySignature(secret, sig, '1000', body, 1000)).toBe(true);
    expect(verifySignature(secret, sig, 1000, body, 1300)).toBe(true);
    expect(verifySignature(secret, sig, 1000, body, 700)).toBe(true);
    expect(verifySignature(secret, sig, 1000, body, 1301)).toBe(false);
    expect(verifySignature(secret, sig, 1000, body, 699)).toBe(false);
    expect(verifySignature(secret, sig, 1001, body, 1000)).toBe(false);
    expect(verifySignature(secret, sig, '1000', Buffer.from('{"a":"e"}'), 1000)).toBe(false);
    expect(verifySignature('whsec_other', sig, 1000, body, 1000)).toBe(false);
    expect(verifySignature(secret, sig.replace('sha256=', ''), 1000, body, 1000)).toBe(false);
    expect(verifySignature(secret, undefined, 1000, body, 1000)).toBe(false);
    expect(verifySignature(secret, sig, 'soon', body, 1000)).toBe(false);
  });
});

describe('secrets', () => {
  it('are whsec_ + 32 random bytes in base64url, hinted by their last four characters', () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
    expect(secretHint(a)).toBe(`whsec_...${a.slice(-4)}`);
  });
});
