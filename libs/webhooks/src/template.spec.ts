import { isKnownVariable, renderHeaderValue, renderPayload, renderTemplate, renderUrl, TemplateRefused, type TemplateVars } from './template.js';

// §6 "Variables": parse first, substitute, serialise again; whole-value placeholders keep their type.
const vars: TemplateVars = {
  event: {
    id: 'evt_01HX',
    type: 'render.failed',
    created: '2026-03-01T10:00:00.000Z', livemode: true,
    data: {
      id: 'rnd_1',
      status: 'failed',
      duration: 12.5,
      credits: 0,
      watermarked: false,
      title: 'He said "hi"\nthen left \\ ok',
      error: { code: 'RENDER_TIMEOUT', message: 'took too long' },
      tags: ['a', 'b'],
      expiresAt: null,
    },
  },
  timestamp: 1_772_359_200,
  orgId: 'org_7',
  endpointId: 'whk_9',
};

describe('payload templates', () => {
  it('keep the type of a whole-value placeholder', () => {
    const out = renderPayload(
      '{"all": "{{data}}", "n": "{{data.duration}}", "zero": "{{data.credits}}", "flag": "{{data.watermarked}}", "ts": "{{timestamp}}", "tags": "{{ data.tags }}", "code": "{{data.error.code}}"}',
      vars,
    );
    expect(out).toEqual({
      all: vars.event.data,
      n: 12.5,
      zero: 0,
      flag: false,
      ts: 1_772_359_200,
      tags: ['a', 'b'],
      code: 'RENDER_TIMEOUT',
    });
  });

  it('resolve absent paths to null as a whole value and to an empty string inside text', () => {
    const out = renderPayload('{"a": "{{data.nope}}", "b": "x-{{data.nope.deeper}}-y", "c": "{{data.expiresAt}}", "d": "[{{data.expiresAt}}]", "e": "{{data.error.code.more}}"}', vars);
    expect(out).toEqual({ a: null, b: 'x--y', c: null, d: '[]', e: null });
  });

  it('keep quotes, backslashes and newlines of values inside the JSON string they land in', () => {
    const text = renderTemplate('{"msg": "Render {{data.id}}: {{data.title}}", "raw": "{{data.title}}"}', vars);
    expect(JSON.parse(text)).toEqual({ msg: `Render rnd_1: ${vars.event.data.title as string}`, raw: vars.event.data.title });
    expect(text).not.toContain('\n');
  });

  it('write objects and numbers as text inside longer strings', () => {
    const out = renderPayload('{"s": "err={{data.error}} d={{data.duration}} ok={{data.watermarked}}"}', vars);
    expect(out.s).toBe('err={"code":"RENDER_TIMEOUT","message":"took too long"} d=12.5 ok=false');
  });

  it('resolve every variable of §6, nested in arrays and objects, and leave keys and other values as written', () => {
    const out = renderPayload(
      '{"{{event.id}}": 1, "meta": {"list": ["{{event.type}}", "{{event.created}}", "{{org.id}}", "{{endpoint.id}}", 3, true, null]}, "index": "{{data.tags.1}}"}',
      vars,
    );
    expect(out).toEqual({
      '{{event.id}}': 1,
      meta: { list: ['render.failed', '2026-03-01T10:00:00.000Z', 'org_7', 'whk_9', 3, true, null] },
      index: 'b',
    });
  });

  it('never reach inherited properties or unknown variables', () => {
    const out = renderPayload('{"a": "{{data.constructor}}", "b": "{{data.__proto__}}", "c": "{{data.id.length}}", "d": "{{secret}}", "e": "x{{event.typo}}"}', vars);
    expect(out).toEqual({ a: null, b: null, c: null, d: null, e: 'x' });
  });

  it('refuse a template that is not a JSON object', () => {
    for (const bad of ['[1]', '"text"', '{"a": {{data}}}', 'null', '']) expect(() => renderPayload(bad, vars)).toThrow(TemplateRefused);
  });
});

describe('URL and header templating', () => {
  it('URL-encodes values and leaves absent ones empty', () => {
    const ctx = { ...vars, event: { ...vars.event, data: { ...vars.event.data, id: 'a b/c?d=1&e#f' } } };
    expect(renderUrl('https://hooks.example.com/{{org.id}}/{{data.id}}?t={{event.type}}&x={{data.nope}}', ctx))
      .toBe('https://hooks.example.com/org_7/a%20b%2Fc%3Fd%3D1%26e%23f?t=render.failed&x=');
  });

  it('fills header values and refuses a value that resolves to a line break', () => {
    expect(renderHeaderValue('Bearer {{org.id}}-{{data.nope}}', vars)).toBe('Bearer org_7-');
    expect(renderHeaderValue('{{data.error}}', vars)).toBe('{"code":"RENDER_TIMEOUT","message":"took too long"}');
    expect(() => renderHeaderValue('x {{data.title}}', vars)).toThrow(/line break/);
    const cr = { ...vars, event: { ...vars.event, data: { id: 'a\rb' } } };
    expect(() => renderHeaderValue('{{data.id}}', cr)).toThrow(TemplateRefused);
    const wide = { ...vars, event: { ...vars.event, data: { id: '日本' } } };
    expect(() => renderHeaderValue('{{data.id}}', wide)).toThrow(TemplateRefused);
  });

  it('knows the variables of §6', () => {
    for (const name of ['event.type', 'event.id', 'event.created', 'timestamp', 'data', 'data.id', 'data.error.code', 'org.id', 'endpoint.id']) expect(isKnownVariable(name)).toBe(true);
    for (const name of ['event', 'event.typo', 'org', 'secret', 'data.', 'data..x', 'endpoint.secret']) expect(isKnownVariable(name)).toBe(false);
  });
});
