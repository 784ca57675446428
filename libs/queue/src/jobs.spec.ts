import { ALL_JOBS, QUEUES, queueOf, validatePayload, type JobName } from './jobs.js';
import { DELIVERY_ATTEMPTS, deliveryBackoff, isWorkerLost, JOB_OPTIONS, QUEUE_WORKER_SETTINGS, SCHEDULES, VIDEO_ATTEMPTS } from './options.js';

// Job payloads are checked when enqueued and again when a worker takes them (STYLE.md "Job payloads").
describe('job payloads', () => {
  const valid: { [N in JobName]: unknown } = {
    'system.ping': { nonce: 'n', sentAt: 1 },
    'credits.sweep': { maxAgeSec: 60 },
    'renders.purge': { now: '2026-11-25T10:00:00Z' },
    'assets.sweep': { now: '2026-11-25T10:00:00Z' },
    'transcriptions.sweep': { now: '2026-11-25T10:00:00Z' },
    'asset.process': { assetId: 'ast_01' },
    'transcription.run': { transcriptionId: 'trs_01' },
    'campaign.send': { campaignId: 'cmp_01', workspaceId: 'org_01', runner: 0 },
    'webhooks.dispatch': {},
    'webhooks.deliver-event': { eventId: 'evt_01', deliveryIds: ['dlv_01', 'dlv_02'] },
    'webhooks.deliver': { deliveryId: 'dlv_01' },
    'still.render': { edit: { timeline: {}, output: {} }, key: 'r/x/y.png', scale: 2, watermark: false, renderId: 'rnd_1', aspectRules: [] },
    'video.render': { renderId: 'rnd_1' },
    'video.chunk': { renderId: 'rnd_1', token: 'a'.repeat(24), index: 0, from: 0, to: 599, totalFrames: 1200 },
    'video.combine': { renderId: 'rnd_1', token: 'a'.repeat(24) },
    'workflow.row': { runId: 'wfr_1', rowId: 'wrw_1' },
    'workflow.run': { runId: 'wfr_1' },
  };

  it.each(ALL_JOBS)('accepts a well-formed %s payload as it is', (name) => {
    expect(validatePayload(name, valid[name])).toBe(valid[name]);
  });

  it.each([
    ['system.ping', { nonce: '', sentAt: 1 }, /nonce/],
    ['system.ping', { nonce: 'n' }, /sentAt/],
    ['credits.sweep', { maxAgeSec: -1 }, /maxAgeSec/],
    ['renders.purge', { now: 'yesterday' }, /ISO date/],
    ['campaign.send', { campaignId: 'rnd_1', workspaceId: 'org_01', runner: 0 }, /campaign id/],
    ['webhooks.deliver', { deliveryId: 'rnd_1' }, /delivery id/],
    ['webhooks.deliver', { deliveryId: 'dlv_1', after: -1 }, /after/],
    ['webhooks.deliver-event', { eventId: 'dlv_1', deliveryIds: ['dlv_1'] }, /event id/],
    ['webhooks.deliver-event', { eventId: 'evt_1', deliveryIds: [] }, /delivery ids/],
    ['video.render', { renderId: 'tpl_1' }, /render id/],
    ['asset.process', { assetId: 'rnd_1' }, /asset id/],
    ['transcription.run', { transcriptionId: 'ast_1' }, /transcription id/],
    ['assets.sweep', { now: 'soon' }, /ISO date/],
    ['video.chunk', { ...(valid['video.chunk'] as object), token: 'not hex!' }, /token/],
    ['video.chunk', { ...(valid['video.chunk'] as object), from: 10, to: 9 }, /before from/],
    ['video.chunk', { ...(valid['video.chunk'] as object), index: 1.5 }, /index/],
    ['video.combine', { renderId: 'rnd_1' }, /token/],
    ['still.render', { ...(valid['still.render'] as object), scale: 4 }, /scale/],
    ['still.render', { ...(valid['still.render'] as object), edit: { timeline: {} } }, /edit spec/],
    ['still.render', { ...(valid['still.render'] as object), renderId: 'nope' }, /render id/],
    ['video.render', { renderId: 'rnd_1', requestId: 'a b' }, /request id/],
    ['webhooks.deliver', { deliveryId: 'dlv_1', requestId: 7 }, /request id/],
  ] as const)('refuses a malformed %s payload, naming the field', (name, data, why) => {
    expect(() => validatePayload(name, data)).toThrow(why);
  });

  it('lets any job carry the id of the request it was added from (the worker logs it)', () => {
    const data = { renderId: 'rnd_1', requestId: 'req_01ABC' };
    expect(validatePayload('video.render', data)).toBe(data);
  });

  it('refuses what is not an object, and names no job it does not know', () => {
    expect(() => validatePayload('system.ping', null)).toThrow(/not an object/);
    expect(() => validatePayload('system.ping', [1])).toThrow(/not an object/);
    expect(() => validatePayload('system.nope' as JobName, {})).toThrow(/unknown job/);
  });

  it('puts every job on exactly one queue', () => {
    expect(new Set(ALL_JOBS).size).toBe(ALL_JOBS.length);
    for (const [queue, jobs] of Object.entries(QUEUES)) for (const job of jobs) expect(queueOf(job)).toBe(queue);
  });
});

// One place states retries and priorities; the producers (API, worker) and the consumer read it.
describe('job options', () => {
  it('retries webhook deliveries 5 times after 1, 4, 9 and 16 s (§6 "Retries")', () => {
    expect(JOB_OPTIONS['webhooks.deliver']).toMatchObject({ attempts: 5, backoff: { type: 'custom' } });
    expect(DELIVERY_ATTEMPTS).toBe(5);
    const backoff = QUEUE_WORKER_SETTINGS.webhooks.settings!.backoffStrategy!;
    expect([1, 2, 3, 4].map((made) => backoff(made, 'custom'))).toEqual([1000, 4000, 9000, 16000]);
    // A development worker told other waits (WEBHOOK_RETRY_DELAYS_MS) uses them in the same order.
    expect([1, 2, 3, 4].map((made) => deliveryBackoff([10, 20, 30, 40])(made))).toEqual([10, 20, 30, 40]);
    // A retry job of an event's first attempt (after: 1) goes on with the schedule where that attempt left it.
    expect([1, 2, 3].map((made) => backoff(made, 'custom', undefined, { data: { deliveryId: 'dlv_1', after: 1 } } as never))).toEqual([4000, 9000, 16000]);
  });

  it('runs a video at most 3 times, and not again once it has lost two workers (issue 27), its chunks failing their combine job', () => {
    expect(VIDEO_ATTEMPTS).toBe(3);
    for (const name of ['video.render', 'video.chunk', 'video.combine'] as const) expect(JOB_OPTIONS[name].attempts).toBe(3);
    expect(QUEUE_WORKER_SETTINGS.videos.maxStalledCount).toBe(1);
    expect(JOB_OPTIONS['video.chunk'].failParentOnFailure).toBe(true);
  });

  it('fails a still or an asset whose worker died instead of running it again (issue 27), and knows that failure by its reason', () => {
    expect([QUEUE_WORKER_SETTINGS.stills.maxStalledCount, QUEUE_WORKER_SETTINGS.assets.maxStalledCount]).toEqual([0, 0]);
    expect(isWorkerLost(new Error('job stalled more than allowable limit'))).toBe(true);
    expect(isWorkerLost('The render failed')).toBe(false);
    expect(JOB_OPTIONS['video.chunk'].failParentOnFailure).toBe(true);
  });

  it('gives stills a queue of their own, in its wait list (no priority: KEDA counts that list), and schedules the sweeps', () => {
    expect(QUEUES.stills).toEqual(['still.render']);
    expect(JOB_OPTIONS['still.render'].priority).toBeUndefined();
    expect(SCHEDULES.map((s) => s.job)).toEqual(['credits.sweep', 'renders.purge', 'assets.sweep', 'transcriptions.sweep', 'webhooks.dispatch']);
  });
});
