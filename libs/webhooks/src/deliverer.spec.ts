import { jest } from '@jest/globals';
import { deriveKey, encryptSecret } from '#libs/core';
import type { DeliveryRequest } from './build.js';
import { EVENT_SENDS_AT_ONCE, JOB_READ_FRESH_MS, WebhookDeliverer } from './deliverer.js';
import type { DeliveryResult } from './send.js';
import type { AttemptRow, WebhookStore } from './store.js';

// Issue 33: a first-attempts job reads its deliveries together once (one statement on PostgreSQL),
// and a send that starts JOB_READ_FRESH_MS or more later reads its delivery again, so a delivery
// cancelled (its endpoint paused or deleted) meanwhile is not sent.
describe('a first-attempts job\'s reads', () => {
  const appSecret = Buffer.alloc(32, 7);
  const sealed = encryptSecret(deriveKey(appSecret, 'encryption'), 'whsec_test');
  const row = (state: AttemptRow['state'] = 'pending', attempts = 0): AttemptRow => ({
    state, attempts, test: false, event: { id: 'evt_1', type: 'render.completed', created: '2026-11-29T00:00:00.000Z', livemode: true, data: {} },
    workspaceId: 'org_1', endpointId: 'whk_1',
    endpoint: { url: 'https://hooks.example/x', method: 'POST', bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null, headers: [], secretSealed: sealed, isActive: true },
  });
  // One wave of sends at once, and one more that waits for a lane.
  const ids = Array.from({ length: EVENT_SENDS_AT_ONCE + 1 }, (_, i) => `dlv_${String(i).padStart(2, '0')}`);
  const last = ids[ids.length - 1];

  /** A store whose rows read together are `together` (pending by default) and, read again one by one, cancelled. */
  function fakeStore(together: (id: string) => AttemptRow | undefined = () => row()) {
    const calls = { together: 0, oneByOne: [] as string[], recorded: [] as string[] };
    const store = {
      loadAttempts: async (list: readonly string[]) => {
        calls.together++;
        return new Map(list.flatMap((id) => {
          const r = together(id);
          return r ? [[id, r] as const] : [];
        }));
      },
      loadAttempt: async (id: string) => {
        calls.oneByOne.push(id);
        return row('cancelled');
      },
      recordAttempt: async (r: { deliveryId: string }) => void calls.recorded.push(r.deliveryId),
      cancel: async () => undefined,
    };
    return { store: store as unknown as WebhookStore, calls };
  }
  const sends: string[] = [];
  const answer = (ms: number) => async (req: DeliveryRequest): Promise<DeliveryResult> => {
    sends.push(req.url);
    await new Promise((r) => setTimeout(r, ms));
    return { status: 200, durationMs: ms, responseSnippet: 'ok', truncated: false };
  };
  const deliverer = (store: WebhookStore, ms: number) => new WebhookDeliverer(store, { appSecret, env: 'development' }, { send: answer(ms) });

  beforeEach(() => {
    sends.length = 0;
    jest.useFakeTimers();
  });
  afterEach(() => jest.useRealTimers());

  /** The job's result once the fake clock has run past every send. */
  async function run<T>(work: Promise<T>): Promise<T> {
    await jest.advanceTimersByTimeAsync(3 * JOB_READ_FRESH_MS);
    return work;
  }

  it('sends every delivery from the one read when the job is quick', async () => {
    const { store, calls } = fakeStore();
    const out = await run(deliverer(store, 5).firstAttempts(ids));
    expect(out.map((o) => o.outcome)).toEqual(Array(ids.length).fill('success'));
    expect([calls.together, calls.oneByOne.length, calls.recorded.length]).toEqual([1, 0, ids.length]);
  });

  it('reads a delivery again when its send starts JOB_READ_FRESH_MS after the read, and does not send one cancelled meanwhile', async () => {
    const { store, calls } = fakeStore();
    // The first wave is answered exactly when the read turns stale: the last delivery's lane starts then.
    const out = await run(deliverer(store, JOB_READ_FRESH_MS).firstAttempts(ids));
    expect(calls.oneByOne).toEqual([last]);
    expect(out.find((o) => o.deliveryId === last)).toMatchObject({ outcome: 'cancelled' });
    expect(out.filter((o) => o.outcome === 'success')).toHaveLength(EVENT_SENDS_AT_ONCE);
    expect([sends.length, calls.recorded.includes(last)]).toEqual([EVENT_SENDS_AT_ONCE, false]);
  });

  it('from the joint read too: a delivery already attempted goes to its retry with its attempts, one gone is cancelled, neither is sent', async () => {
    const { store, calls } = fakeStore((id) => (id === ids[0] ? row('pending', 2) : id === ids[1] ? undefined : row()));
    const out = await run(deliverer(store, 5).firstAttempts(ids));
    expect(out.find((o) => o.deliveryId === ids[0])).toEqual({ deliveryId: ids[0], outcome: 'retry', after: 2 });
    expect(out.find((o) => o.deliveryId === ids[1])).toEqual({ deliveryId: ids[1], outcome: 'cancelled', after: 0 });
    expect([sends.length, calls.recorded.length]).toEqual([ids.length - 2, ids.length - 2]);
  });
});
