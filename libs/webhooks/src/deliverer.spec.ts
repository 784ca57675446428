import { deriveKey, encryptSecret } from '#libs/core';
import type { DeliveryRequest } from './build.js';
import { JOB_READ_FRESH_MS, WebhookDeliverer } from './deliverer.js';
import type { DeliveryResult } from './send.js';
import type { AttemptRow, WebhookStore } from './store.js';

// Issue 33: a first-attempts job reads its deliveries together once (one statement on PostgreSQL),
// and a send that starts more than JOB_READ_FRESH_MS later reads its delivery again, so a delivery
// cancelled (its endpoint paused or deleted) meanwhile is not sent.
describe('a first-attempts job\'s reads', () => {
  const appSecret = Buffer.alloc(32, 7);
  const sealed = encryptSecret(deriveKey(appSecret, 'encryption'), 'whsec_test');
  const row = (state: AttemptRow['state'] = 'pending'): AttemptRow => ({
    state, attempts: 0, test: false, event: { id: 'evt_1', type: 'render.completed', created: '2026-11-29T00:00:00.000Z', livemode: true, data: {} },
    workspaceId: 'org_1', endpointId: 'whk_1',
    endpoint: { url: 'https://hooks.example/x', method: 'POST', bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null, headers: [], secretSealed: sealed, isActive: true },
  });

  /** A store whose rows are pending when the job reads them together and cancelled when read again one by one. */
  function fakeStore() {
    const calls = { together: 0, oneByOne: [] as string[], recorded: [] as string[] };
    const store = {
      loadAttempts: async (ids: readonly string[]) => {
        calls.together++;
        return new Map(ids.map((id) => [id, row()]));
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
  const answer = (ms: number) => async (_req: DeliveryRequest): Promise<DeliveryResult> => {
    await new Promise((r) => setTimeout(r, ms));
    return { status: 200, durationMs: ms, responseSnippet: 'ok', truncated: false };
  };
  const ids = Array.from({ length: 17 }, (_, i) => `dlv_${String(i).padStart(2, '0')}`);

  it('sends every delivery from the one read when the job is quick', async () => {
    const { store, calls } = fakeStore();
    const out = await new WebhookDeliverer(store, { appSecret, env: 'development' }, { send: answer(5) }).firstAttempts(ids);
    expect(out.map((o) => o.outcome)).toEqual(Array(17).fill('success'));
    expect([calls.together, calls.oneByOne.length, calls.recorded.length]).toEqual([1, 0, 17]);
  });

  it('reads a delivery again when its send starts after the read has gone stale, and does not send one cancelled meanwhile', async () => {
    const { store, calls } = fakeStore();
    // 16 sends at once (EVENT_SENDS_AT_ONCE), each answered after longer than the read stays fresh: the 17th starts late.
    const out = await new WebhookDeliverer(store, { appSecret, env: 'development' }, { send: answer(JOB_READ_FRESH_MS + 100) }).firstAttempts(ids);
    expect(calls.oneByOne).toEqual(['dlv_16']);
    expect(out.find((o) => o.deliveryId === 'dlv_16')).toMatchObject({ outcome: 'cancelled' });
    expect(out.filter((o) => o.outcome === 'success')).toHaveLength(16);
    expect(calls.recorded).not.toContain('dlv_16');
  });
});
