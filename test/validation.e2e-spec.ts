import { startApi, type TestApi } from './harness.js';
import { ProbeModule } from './probe.module.js';

// §7 and decisions.md "Envelope and errors": 400 INVALID_REQUEST only for a malformed body (not JSON,
// not a JSON object); a well-formed body whose values break a rule, unknown fields included, is 422
// VALIDATION_FAILED with `errors` by path. docs/decisions.md "HTTP and errors".
describe('request bodies', () => {
  let api: TestApi;
  let key: string;
  beforeAll(async () => {
    api = await startApi({}, [ProbeModule]);
    key = ((await api.cli('workspace:create', '--name', 'V')).json as { liveKey: string }).liveKey;
  });
  afterAll(() => api.close());

  const send = (payload: string) =>
    api.app.inject({ method: 'POST', url: '/api/v1/probe/echo', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload });
  const post = (payload: unknown) => send(JSON.stringify(payload));

  it('passes a valid body through', async () => {
    const res = await post({ name: 'ok', output: { scale: 2 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ name: 'ok', output: { scale: 2 } });
  });

  it('§7: refuses unknown fields with 422 VALIDATION_FAILED instead of dropping them, naming each path', async () => {
    const res = await post({ name: 'ok', colour: 'red', output: { scale: 1, extra: true } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ success: false, code: 'VALIDATION_FAILED', data: null });
    expect(res.json().errors).toEqual({ colour: ['Unknown field "colour"'], 'output.extra': ['Unknown field "output.extra"'] });
  });

  it('§7: names every invalid value by path (422 VALIDATION_FAILED)', async () => {
    const res = await post({ name: 'much too long a name', output: { scale: 9 } });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('VALIDATION_FAILED');
    expect(res.json().errors).toEqual({ name: [expect.stringContaining('10')], 'output.scale': [expect.stringContaining('3')] });
    expect(res.json().message).toContain('name');
  });

  it('§7: a JSON body that is not an object, or not JSON at all, is a malformed body: 400 INVALID_REQUEST', async () => {
    for (const payload of ['[1, 2]', '"text"', '42', 'null', '{"name": "ok",', '{name: 1}']) {
      const res = await send(payload);
      expect([payload, res.statusCode, res.json().code]).toEqual([payload, 400, 'INVALID_REQUEST']);
      expect(res.json().errors).toBeUndefined();
    }
  });

  it('an empty body with Content-Type: application/json is no body: the required fields are named (422), not "malformed"', async () => {
    const res = await send('');
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual(['name']);
  });
});
