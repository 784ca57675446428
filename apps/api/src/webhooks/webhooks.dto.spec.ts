import type { Type } from '@nestjs/common';
import type { ApiError } from '#libs/core';
import { validationPipe } from '../http/validation.js';
import { CallbackSettingsDto, CreateWebhookDto, UpdateWebhookDto } from './webhooks.dto.js';

// §4.6, §4.7, §8 "Webhook endpoint": the shapes of the endpoint bodies, through the global pipe
// (decisions.md "Envelope and errors": 422 VALIDATION_FAILED with `errors` by path; 400 only for a
// body that is not a JSON object). The rules past the shape are libs/webhooks validate.spec.ts's.
const pipe = validationPipe();
const base = { url: 'https://hooks.example.com/in' };

async function refusal(body: unknown, metatype: Type = CreateWebhookDto): Promise<{ status: number; code: string; errors?: Record<string, string[]> }> {
  try {
    await pipe.transform(body, { type: 'body', metatype });
  } catch (err) {
    const e = err as ApiError;
    return { status: e.status, code: e.code, errors: e.extras.errors };
  }
  throw new Error(`expected ${JSON.stringify(body)} to be refused`);
}

async function errorsOf(body: unknown, metatype?: Type): Promise<Record<string, string[]>> {
  const r = await refusal(body, metatype);
  expect([r.status, r.code]).toEqual([422, 'VALIDATION_FAILED']);
  return r.errors ?? {};
}

describe('webhook endpoint bodies (DTO)', () => {
  it('lets a full body through, as given', async () => {
    const body = {
      ...base, description: 'main', events: ['render.completed', 'credits.low'], method: 'PUT', bodyFormat: 'form', payloadMode: 'custom',
      payloadTemplate: '{"id": "{{data.id}}"}', headers: [{ key: 'Authorization', value: 'Bearer {{org.id}}' }], isActive: false,
    };
    expect({ ...(await pipe.transform(body, { type: 'body', metatype: CreateWebhookDto })) }).toMatchObject({ ...body, headers: [{ ...body.headers[0] }] });
  });

  it('requires a url of at most 2048 characters', async () => {
    expect(Object.keys(await errorsOf({ events: ['render.completed'] }))).toEqual(['url']);
    expect(Object.keys(await errorsOf({ url: `https://example.com/${'a'.repeat(2048)}` }))).toEqual(['url']);
    expect(Object.keys(await errorsOf({ url: '' }))).toEqual(['url']);
  });

  it('§8: a 201-character description, and a 21st header, are refused by path', async () => {
    expect((await errorsOf({ ...base, description: 'd'.repeat(201) })).description).toEqual([expect.stringContaining('200')]);
    await expect(pipe.transform({ ...base, description: 'd'.repeat(200) }, { type: 'body', metatype: CreateWebhookDto })).resolves.toBeDefined();
    const headers = Array.from({ length: 21 }, (_, i) => ({ key: `X-H${i}`, value: String(i) }));
    expect((await errorsOf({ ...base, headers })).headers).toEqual([expect.stringContaining('20')]);
    await expect(pipe.transform({ ...base, headers: headers.slice(0, 20) }, { type: 'body', metatype: CreateWebhookDto })).resolves.toBeDefined();
  });

  it('§6: events, method, bodyFormat and payloadMode come from their sets', async () => {
    expect((await errorsOf({ ...base, events: ['render.completed', 'render.exploded'] })).events).toEqual([expect.stringMatching(/^"render\.exploded" not an event; events: render\.queued, /)]);
    expect(Object.keys(await errorsOf({ ...base, events: [] }))).toEqual(['events']);
    expect(Object.keys(await errorsOf({ ...base, events: 'render.completed' }))).toEqual(['events']);
    expect(Object.keys(await errorsOf({ ...base, method: 'DELETE', bodyFormat: 'xml', payloadMode: 'raw' })).sort()).toEqual(['bodyFormat', 'method', 'payloadMode']);
    expect(Object.keys(await errorsOf({ ...base, method: 'post' }))).toEqual(['method']);
  });

  it('checks each header\'s shape by index, and refuses unknown fields anywhere', async () => {
    const errors = await errorsOf({
      ...base,
      headers: [
        { key: 'Bad Name', value: 'x' },
        { key: 'X-Ok', value: 'a\r\nInjected: 1' },
        { key: '', value: 'x' },
        { key: 'X-Num', value: 5 },
        'not an object',
        { key: 'X-Nul', value: 'a\u0000b' },
        { key: 'X-Extra', value: 'x', other: 1 },
      ],
      secret: 'whsec_mine',
    });
    expect(Object.keys(errors).sort()).toEqual([
      'headers[0].key', 'headers[1].value', 'headers[2].key', 'headers[3].value', 'headers[4]', 'headers[5].value', 'headers[6].other', 'secret',
    ]);
    expect(errors.secret).toEqual(['Unknown field "secret"']);
    expect(errors['headers[1].value']).toEqual([expect.stringContaining('line breaks')]);
  });

  it('types the rest: a null url or isActive "yes" is refused, a null description or payload template is none', async () => {
    expect(Object.keys(await errorsOf({ url: null }, UpdateWebhookDto))).toEqual(['url']);
    expect(Object.keys(await errorsOf({ isActive: 'yes' }, UpdateWebhookDto))).toEqual(['isActive']);
    expect(Object.keys(await errorsOf({ ...base, payloadTemplate: { a: 1 } }))).toEqual(['payloadTemplate']);
    await expect(pipe.transform({ description: null, payloadTemplate: null }, { type: 'body', metatype: UpdateWebhookDto })).resolves.toBeDefined();
    await expect(pipe.transform({}, { type: 'body', metatype: UpdateWebhookDto })).resolves.toBeDefined();
  });

  it('a body that is not a JSON object is 400 INVALID_REQUEST (§7 malformed body)', async () => {
    for (const body of [[base], 'https://hooks.example.com', 42, null]) {
      expect(await refusal(body)).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    }
  });

  it('the default callback URL is a URL or null, and must be sent', async () => {
    expect(Object.keys(await errorsOf({}, CallbackSettingsDto))).toEqual(['defaultCallbackUrl']);
    expect(Object.keys(await errorsOf({ defaultCallbackUrl: 5 }, CallbackSettingsDto))).toEqual(['defaultCallbackUrl']);
    await expect(pipe.transform({ defaultCallbackUrl: null }, { type: 'body', metatype: CallbackSettingsDto })).resolves.toEqual({ defaultCallbackUrl: null });
  });
});
