import { DEFAULT_EVENTS } from './types.js';
import { mergeEndpointUpdate, validateEndpointInput, type EndpointSettings, type ValidateOptions } from './validate.js';

// §4.6 / §4.7 bodies of the webhook endpoint routes, past their DTO (apps/api webhooks.dto.spec.ts):
// the rules that need the deployment or the stored endpoint; 422 `errors` keyed by path (decisions.md).
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
      modes: ['live', 'test'],
    });
  });

  it('takes modes (issue 28): both by default for a live caller, ["test"] for a test caller, who may not name live', () => {
    expect(valueOf(base, { ...prod, callerMode: 'live' }).modes).toEqual(['live', 'test']);
    expect(valueOf(base, { ...prod, callerMode: 'test' }).modes).toEqual(['test']);
    expect(valueOf({ ...base, modes: ['live'] }, { ...prod, callerMode: 'live' }).modes).toEqual(['live']);
    expect(valueOf({ ...base, modes: ['test', 'live', 'test'] }, { ...prod, callerMode: 'live' }).modes).toEqual(['live', 'test']);
    expect(errorsOf({ ...base, modes: ['live', 'test'] }, { ...prod, callerMode: 'test' }).modes).toEqual([
      'a test key or a test-mode session may not subscribe an endpoint to live events; use a live key',
    ]);
    expect(errorsOf({ modes: ['live'] }, { ...prod, callerMode: 'test', partial: true }).modes).toHaveLength(1);
    // An update that leaves modes alone keeps them.
    const stored = valueOf({ ...base, modes: ['test'] }, { ...prod, callerMode: 'test' }) as EndpointSettings;
    const merged = mergeEndpointUpdate(stored, { description: 'x' }, { ...prod, callerMode: 'test' });
    expect(merged.ok && merged.value.modes).toEqual(['test']);
  });

  it('requires an absolute url, https outside development', () => {
    expect(errorsOf({ events: base.events }).url).toEqual(['must be an absolute URL']);
    expect(errorsOf({ ...base, url: '/relative' }).url).toEqual(['must be an absolute URL']);
    expect(errorsOf({ ...base, url: 'http://hooks.example.com/' }).url).toEqual(['must use https']);
    expect(errorsOf({ ...base, url: 'ftp://hooks.example.com/' }, dev).url).toEqual(['must use http or https']);
    expect(valueOf({ ...base, url: 'http://localhost:4000/hook' }, dev).url).toBe('http://localhost:4000/hook');
    expect(errorsOf({ ...base, url: 'https://user:pw@hooks.example.com/' }).url).toEqual(['must not contain credentials']);
  });

  it('refuses loopback and private literal hosts in production only', () => {
    for (const url of ['https://127.0.0.1/x', 'https://10.0.0.8/x', 'https://[::1]/x', 'https://localhost/x', 'https://api.localhost/x']) {
      expect(errorsOf({ ...base, url }).url).toEqual(['must point to a public address']);
      expect(valueOf({ ...base, url }, dev).url).toBe(url);
    }
    expect(valueOf({ ...base, url: 'https://93.184.216.34/x' }).url).toBe('https://93.184.216.34/x');
  });

  it('refuses the cloud metadata addresses in development too (issue 21; libs/outbound ssrf.ts)', () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'https://169.254.169.254/', 'http://[fd00:ec2::254]/', 'http://[fe80::1]/x']) {
      expect(errorsOf({ ...base, url }, dev).url).toEqual(['must point to a public address']);
      expect(errorsOf({ ...base, url: url.replace('http:', 'https:') }).url).toEqual(['must point to a public address']);
    }
  });

  it('accepts variables in the url, checking its shape with them replaced, and refuses unknown ones', () => {
    expect(valueOf({ ...base, url: 'https://{{org.id}}.hooks.example.com/{{event.type}}?id={{data.id}}' }).url).toContain('{{org.id}}');
    expect(errorsOf({ ...base, url: 'https://hooks.example.com/{{secret}}' }).url[0]).toMatch(/\{\{secret\}\} is not a variable/);
    expect(errorsOf({ ...base, url: '{{data.url}}' }).url).toEqual(['must be an absolute URL']);
  });

  it('requires events unless the route has a default, and keeps each once', () => {
    expect(errorsOf({ url: base.url }).events).toEqual(['is required']);
    expect(valueOf({ url: base.url }, { ...prod, defaultEvents: DEFAULT_EVENTS }).events).toEqual(['render.completed', 'render.failed', 'render.cancelled']);
    expect(valueOf({ ...base, events: ['render.failed', 'render.failed', 'payment.captured'] }).events).toEqual(['render.failed', 'payment.captured']);
  });

  it('keeps the description, null as empty', () => {
    expect(valueOf({ ...base, description: 'main' }).description).toBe('main');
    expect(valueOf({ ...base, description: null }).description).toBe('');
  });

  it('forces bodyFormat none for GET', () => {
    expect(valueOf({ ...base, method: 'GET', bodyFormat: 'multipart' })).toMatchObject({ method: 'GET', bodyFormat: 'none' });
    expect(valueOf({ ...base, method: 'PUT', bodyFormat: 'form' })).toMatchObject({ method: 'PUT', bodyFormat: 'form' });
  });

  it('requires a payload template that is a JSON object in custom mode', () => {
    expect(errorsOf({ ...base, payloadMode: 'custom' }).payloadTemplate).toEqual(['is required when payloadMode is custom']);
    for (const bad of ['[1, 2]', '"a string"', '42', 'null', '{"a": {{data}}}', '{oops']) {
      expect(errorsOf({ ...base, payloadMode: 'custom', payloadTemplate: bad }).payloadTemplate[0]).toMatch(/must be a JSON object/);
    }
    expect(errorsOf({ ...base, payloadMode: 'custom', payloadTemplate: '{"a": "{{data.id}} {{render.id}}"}' }).payloadTemplate[0]).toMatch(/\{\{render\.id\}\} is not a variable/);
    expect(valueOf({ ...base, payloadMode: 'custom', payloadTemplate: '{"id": "{{data.id}}"}' }).payloadTemplate).toBe('{"id": "{{data.id}}"}');
  });

  it('refuses headers the delivery sets, a name configured twice, and unknown variables, by index', () => {
    const errors = errorsOf({
      ...base,
      headers: [
        { key: 'Authorization', value: 'Bearer {{org.id}}' },
        { key: 'x-service-signature', value: 'forged' },
        { key: 'X-SERVICE-Anything', value: 'x' },
        { key: 'authorization', value: 'dup' },
        { key: 'X-Var', value: '{{nope}}' },
      ],
    });
    expect(errors).toEqual({
      'headers[1].key': ['x-service-signature is set by the delivery and cannot be configured'],
      'headers[2].key': [expect.stringMatching(/cannot be configured/)],
      'headers[3].key': ['authorization is already configured'],
      'headers[4].value': [expect.stringMatching(/\{\{nope\}\} is not a variable/)],
    });
  });

  it('refuses the headers the delivery manages, whatever their case', () => {
    for (const key of ['Host', 'content-length', 'Transfer-Encoding', 'CONNECTION', 'Content-Type', 'User-Agent', 'Expect', 'X-Service-Test']) {
      expect(errorsOf({ ...base, headers: [{ key, value: 'x' }] })['headers[0].key']).toHaveLength(1);
    }
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
