import { DEFAULT_EVENTS } from './types.js';
import { mergeEndpointUpdate, validateEndpointInput, type EndpointSettings, type ValidateOptions } from './validate.js';

// §4.6 / §4.7 bodies of the webhook endpoint routes; 422 `errors` keyed by path (decisions.md).
const prod: ValidateOptions = { env: 'production' };
const dev: ValidateOptions = { env: 'development' };
const base = { url: 'https://hooks.example.com/in', events: ['render.completed'] };

function errorsOf(input: unknown, opts: ValidateOptions = prod): Record<string, string[]> {
  const result = validateEndpointInput(input, opts);
  if (result.ok) throw new Error(`expected errors, got ${JSON.stringify(result.value)}`);
  return result.errors;
}
function valueOf(input: unknown, opts: ValidateOptions = prod): Partial<EndpointSettings> {
  const result = validateEndpointInput(input, opts);
  if (!result.ok) throw new Error(`expected a value, got ${JSON.stringify(result.errors)}`);
  return result.value;
}

describe('webhook endpoint input', () => {
  it('applies the defaults of a create', () => {
    expect(valueOf(base)).toEqual({
      url: 'https://hooks.example.com/in',
      description: '',
      events: ['render.completed'],
      method: 'POST',
      bodyFormat: 'json',
      payloadMode: 'default',
      payloadTemplate: null,
      headers: [],
      isActive: true,
    });
  });

  it('requires a url, absolute, https outside development', () => {
    expect(errorsOf({ events: base.events }).url).toEqual(['is required']);
    expect(errorsOf({ ...base, url: '/relative' }).url).toEqual(['must be an absolute URL']);
    expect(errorsOf({ ...base, url: 'http://hooks.example.com/' }).url).toEqual(['must use https']);
    expect(errorsOf({ ...base, url: 'ftp://hooks.example.com/' }, dev).url).toEqual(['must use http or https']);
    expect(valueOf({ ...base, url: 'http://localhost:4000/hook' }, dev).url).toBe('http://localhost:4000/hook');
    expect(errorsOf({ ...base, url: 'https://user:pw@hooks.example.com/' }).url).toEqual(['must not contain credentials']);
    expect(errorsOf({ ...base, url: `https://example.com/${'a'.repeat(2048)}` }).url).toEqual(['must be at most 2048 characters']);
  });

  it('refuses loopback and private literal hosts in production only', () => {
    for (const url of ['https://127.0.0.1/x', 'https://10.0.0.8/x', 'https://[::1]/x', 'https://localhost/x', 'https://api.localhost/x', 'https://169.254.169.254/']) {
      expect(errorsOf({ ...base, url }).url).toEqual(['must point to a public address']);
      expect(valueOf({ ...base, url }, dev).url).toBe(url);
    }
    expect(valueOf({ ...base, url: 'https://93.184.216.34/x' }).url).toBe('https://93.184.216.34/x');
  });

  it('accepts variables in the url, checking its shape with them replaced, and refuses unknown ones', () => {
    expect(valueOf({ ...base, url: 'https://{{org.id}}.hooks.example.com/{{event.type}}?id={{data.id}}' }).url).toContain('{{org.id}}');
    expect(errorsOf({ ...base, url: 'https://hooks.example.com/{{secret}}' }).url[0]).toMatch(/\{\{secret\}\} is not a variable/);
    expect(errorsOf({ ...base, url: '{{data.url}}' }).url).toEqual(['must be an absolute URL']);
  });

  it('requires a non-empty list of known events, or uses the default when given one', () => {
    expect(errorsOf({ url: base.url }).events).toEqual(['is required']);
    expect(valueOf({ url: base.url }, { ...prod, defaultEvents: DEFAULT_EVENTS }).events).toEqual(['render.completed', 'render.failed', 'render.cancelled']);
    expect(errorsOf({ ...base, events: [] }, { ...prod, defaultEvents: DEFAULT_EVENTS }).events).toEqual(['must name at least one event']);
    expect(errorsOf({ ...base, events: 'render.completed' }).events).toEqual(['must be an array of event names']);
    const errors = errorsOf({ ...base, events: ['render.completed', 'render.exploded', 7] });
    expect(Object.keys(errors)).toEqual(['events[1]', 'events[2]']);
    expect(valueOf({ ...base, events: ['render.failed', 'render.failed', 'payment.captured'] }).events).toEqual(['render.failed', 'payment.captured']);
  });

  it('limits the description to 200 characters', () => {
    expect(valueOf({ ...base, description: 'd'.repeat(200) }).description).toHaveLength(200);
    expect(errorsOf({ ...base, description: 'd'.repeat(201) }).description).toEqual(['must be at most 200 characters']);
    expect(errorsOf({ ...base, description: 5 }).description).toEqual(['must be a string']);
  });

  it('checks method, bodyFormat and payloadMode against their sets, and forces bodyFormat none for GET', () => {
    expect(errorsOf({ ...base, method: 'DELETE' }).method).toEqual(['must be one of POST, PUT, PATCH, GET']);
    expect(errorsOf({ ...base, method: 'post' }).method).toHaveLength(1);
    expect(errorsOf({ ...base, bodyFormat: 'xml' }).bodyFormat).toEqual(['must be one of json, form, multipart, none']);
    expect(errorsOf({ ...base, payloadMode: 'raw' }).payloadMode).toEqual(['must be one of default, custom']);
    expect(valueOf({ ...base, method: 'GET', bodyFormat: 'multipart' })).toMatchObject({ method: 'GET', bodyFormat: 'none' });
    expect(valueOf({ ...base, method: 'PUT', bodyFormat: 'form' })).toMatchObject({ method: 'PUT', bodyFormat: 'form' });
  });

  it('requires a payload template that is a JSON object in custom mode', () => {
    expect(errorsOf({ ...base, payloadMode: 'custom' }).payloadTemplate).toEqual(['is required when payloadMode is custom']);
    for (const bad of ['[1, 2]', '"a string"', '42', 'null', '{"a": {{data}}}', '{oops']) {
      expect(errorsOf({ ...base, payloadMode: 'custom', payloadTemplate: bad }).payloadTemplate[0]).toMatch(/must be a JSON object/);
    }
    expect(errorsOf({ ...base, payloadMode: 'custom', payloadTemplate: { a: 1 } }).payloadTemplate).toEqual(['must be a string holding a JSON object']);
    expect(errorsOf({ ...base, payloadMode: 'custom', payloadTemplate: '{"a": "{{data.id}} {{render.id}}"}' }).payloadTemplate[0]).toMatch(/\{\{render\.id\}\} is not a variable/);
    expect(valueOf({ ...base, payloadMode: 'custom', payloadTemplate: '{"id": "{{data.id}}"}' }).payloadTemplate).toBe('{"id": "{{data.id}}"}');
  });

  it('checks each header and reports it by index', () => {
    const errors = errorsOf({
      ...base,
      headers: [
        { key: 'Authorization', value: 'Bearer {{org.id}}' },
        { key: 'Bad Name', value: 'x' },
        { key: 'X-Ok', value: 'a\r\nInjected: 1' },
        { key: 'x-service-signature', value: 'forged' },
        { key: 'X-SERVICE-Anything', value: 'x' },
        { key: '', value: 'x' },
        { key: 'X-Num', value: 5 },
        'not an object',
        { key: 'authorization', value: 'dup' },
        { key: 'X-Var', value: '{{nope}}' },
        { key: 'X-Nul', value: 'a\u0000b' },
        { key: 'X-Extra', value: 'x', other: 1 },
      ],
    });
    expect(errors).toEqual({
      'headers[1].key': [expect.stringMatching(/valid header name/)],
      'headers[2].value': ['must not contain line breaks (CR or LF)'],
      'headers[3].key': ['x-service-signature is set by the delivery and cannot be configured'],
      'headers[4].key': [expect.stringMatching(/cannot be configured/)],
      'headers[5].key': ['is required'],
      'headers[6].value': ['must be a string'],
      'headers[7]': ['must be an object {key, value}'],
      'headers[8].key': ['authorization is already configured'],
      'headers[9].value': [expect.stringMatching(/\{\{nope\}\} is not a variable/)],
      'headers[10].value': [expect.stringMatching(/control characters/)],
      'headers[11].other': ['is not a known field'],
    });
  });

  it('refuses the headers the delivery manages, whatever their case', () => {
    for (const key of ['Host', 'content-length', 'Transfer-Encoding', 'CONNECTION', 'Content-Type', 'User-Agent', 'Expect', 'X-Service-Test']) {
      expect(errorsOf({ ...base, headers: [{ key, value: 'x' }] })['headers[0].key']).toHaveLength(1);
    }
  });

  it('allows up to 20 headers', () => {
    const headers = Array.from({ length: 21 }, (_, i) => ({ key: `X-H${i}`, value: String(i) }));
    expect(valueOf({ ...base, headers: headers.slice(0, 20) }).headers).toHaveLength(20);
    expect(errorsOf({ ...base, headers }).headers).toEqual(['must hold at most 20 headers']);
    expect(errorsOf({ ...base, headers: {} }).headers).toEqual(['must be an array of {key, value}']);
  });

  it('refuses unknown fields and a body that is not an object', () => {
    expect(errorsOf({ ...base, secret: 'whsec_mine' })).toEqual({ secret: ['is not a known field'] });
    expect(errorsOf([base])).toEqual({ body: ['must be a JSON object'] });
    expect(errorsOf({ ...base, isActive: 'yes' }).isActive).toEqual(['must be a boolean']);
  });

  it('checks only the fields of a partial update and applies no defaults', () => {
    expect(valueOf({}, { ...prod, partial: true })).toEqual({});
    expect(valueOf({ isActive: false, events: ['credits.low'] }, { ...prod, partial: true })).toEqual({ isActive: false, events: ['credits.low'] });
    expect(valueOf({ payloadMode: 'custom' }, { ...prod, partial: true })).toEqual({ payloadMode: 'custom' });
    expect(valueOf({ method: 'GET' }, { ...prod, partial: true })).toEqual({ method: 'GET', bodyFormat: 'none' });
    expect(errorsOf({ url: 'http://hooks.example.com/' }, { ...prod, partial: true })).toEqual({ url: ['must use https'] });
  });
});

describe('merging an update into stored settings', () => {
  const stored = valueOf(base) as EndpointSettings;

  it('checks the merged whole', () => {
    const custom = mergeEndpointUpdate(stored, { payloadMode: 'custom' }, prod);
    expect(custom).toEqual({ ok: false, errors: { payloadTemplate: ['is required when payloadMode is custom'] } });
    const withTemplate = mergeEndpointUpdate({ ...stored, payloadTemplate: '{"a": "{{data}}"}' }, { payloadMode: 'custom' }, prod);
    expect(withTemplate).toMatchObject({ ok: true, value: { payloadMode: 'custom', payloadTemplate: '{"a": "{{data}}"}', url: base.url } });
  });

  it('replaces lists and goes back to json when leaving GET without a bodyFormat', () => {
    const get = mergeEndpointUpdate(stored, { method: 'GET' }, prod);
    expect(get).toMatchObject({ ok: true, value: { method: 'GET', bodyFormat: 'none' } });
    if (!get.ok) return;
    expect(mergeEndpointUpdate(get.value, { method: 'POST' }, prod)).toMatchObject({ ok: true, value: { bodyFormat: 'json' } });
    expect(mergeEndpointUpdate(get.value, { method: 'PUT', bodyFormat: 'form' }, prod)).toMatchObject({ ok: true, value: { bodyFormat: 'form' } });
    const headers = mergeEndpointUpdate({ ...stored, headers: [{ key: 'A', value: '1' }] }, { headers: [{ key: 'B', value: '2' }] }, prod);
    expect(headers).toMatchObject({ ok: true, value: { headers: [{ key: 'B', value: '2' }] } });
  });
});
