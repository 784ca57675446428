import { startApi, type TestApi } from './harness.js';
import { ProbeModule } from './probe.module.js';

// decisions.md "Envelope and errors"; docs/decisions.md (unknown fields refused).
describe('request bodies', () => {
  let api: TestApi;
  let key: string;
  beforeAll(async () => {
    api = await startApi({}, [ProbeModule]);
    key = ((await api.cli('workspace:create', '--name', 'V')).json as { liveKey: string }).liveKey;
  });
  afterAll(() => api.close());

  const post = (payload: unknown) =>
    api.app.inject({ method: 'POST', url: '/api/v1/probe/echo', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

  it('passes a valid body through', async () => {
    const res = await post({ name: 'ok', output: { scale: 2 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ name: 'ok', output: { scale: 2 } });
  });

  it('refuses unknown fields instead of dropping them, naming each path', async () => {
    const res = await post({ name: 'ok', colour: 'red', output: { scale: 1, extra: true } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', data: null });
    expect(Object.keys(res.json().errors).sort()).toEqual(['colour', 'output.extra']);
  });

  it('names every invalid value by path', async () => {
    const res = await post({ name: 'much too long a name', output: { scale: 9 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual({ name: [expect.stringContaining('10')], 'output.scale': [expect.stringContaining('3')] });
  });

  it('refuses a JSON body that is not an object', async () => {
    const res = await post([1, 2]);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('INVALID_REQUEST');
  });
});
