import { assignJobs, DELIVERIES_PER_JOB, staleJobs } from './dispatcher.js';

describe('the stale sweep\'s jobs', () => {
  it('hands deliveries never attempted back to their first-attempts job, and the others (attempted, or redeliveries) to their own job', () => {
    const jobs = staleJobs([
      { id: 'dlv_1', eventId: 'evt_a', sequence: 0, attempts: 0, jobId: 'first-dlv_1' },
      { id: 'dlv_2', eventId: 'evt_b', sequence: 0, attempts: 2, jobId: 'first-dlv_1' },
      { id: 'dlv_3', eventId: 'evt_b', sequence: 0, attempts: 0, jobId: 'first-dlv_1' },
      { id: 'dlv_4', eventId: 'evt_c', sequence: 0, attempts: 0, jobId: null },
      { id: 'dlv_6', eventId: 'evt_c', sequence: 0, attempts: 0, jobId: null },
      { id: 'dlv_5', eventId: 'evt_c', sequence: 1, attempts: 0, jobId: null },
    ]);
    // The job id is the one stored on the delivery: a job still waiting takes these instead of a second
    // one. A row made before jobs carried several events has its event's job (that job's id).
    expect(jobs.events).toEqual([
      { jobId: 'first-dlv_1', eventId: 'evt_a', deliveryIds: ['dlv_1', 'dlv_3'] },
      { jobId: 'evt_c', eventId: 'evt_c', deliveryIds: ['dlv_4', 'dlv_6'] },
    ]);
    // A redelivery's job was enqueued by the API under the delivery's id.
    expect(jobs.retries).toEqual([{ deliveryId: 'dlv_2', after: 2 }, { deliveryId: 'dlv_5', after: 0 }]);
  });
});

describe('first-attempts jobs of a dispatch batch', () => {
  /** `n` delivery rows of an event (of workspace `ws`), pending unless `skipped` of them. */
  const event = (eventId: string, n: number, skipped = 0, ws = 'org_a') =>
    Array.from({ length: n }, (_, i) => ({ id: `dlv_${eventId}_${i}`, workspaceId: ws, eventId, state: i < skipped ? 'skipped' : 'pending', jobId: null as string | null }));
  const jobsOf = (rows: ReturnType<typeof event>) => {
    const out = new Map<string, string[]>();
    for (const r of rows) if (r.jobId) out.set(r.jobId, [...(out.get(r.jobId) ?? []), r.id]);
    return [...out].map(([id, ids]) => [id, ids.length]);
  };

  it('puts consecutive events whole into jobs of at most DELIVERIES_PER_JOB deliveries, each job named after its first delivery', () => {
    const rows = [...event('a', 4), ...event('b', 4), ...event('c', 30), ...event('d', 40), ...event('e', 1), ...event('f', 3, 3), ...event('g', 2)];
    assignJobs(rows);
    expect(DELIVERIES_PER_JOB).toBe(32);
    // a+b fit together; c would pass 32 with them; d alone is over 32 and stays whole; e and g share a
    // job (f's deliveries were skipped: no job).
    expect(jobsOf(rows)).toEqual([['first-dlv_a_0', 8], ['first-dlv_c_0', 30], ['first-dlv_d_0', 40], ['first-dlv_e_0', 3]]);
    expect(rows.filter((r) => r.eventId === 'f').map((r) => r.jobId)).toEqual([null, null, null]);
    // Every pending delivery has exactly one job, and an event's deliveries never straddle two.
    for (const id of 'abcdeg') expect(new Set(rows.filter((r) => r.eventId === id).map((r) => r.jobId)).size).toBe(1);
  });

  it('never puts two workspaces\' deliveries in one job (one tenant\'s failing or slow job holds up only its own)', () => {
    const rows = [...event('a', 4), ...event('b', 4, 0, 'org_b'), ...event('c', 4, 0, 'org_b'), ...event('d', 4, 0, 'org_c')];
    assignJobs(rows);
    expect(jobsOf(rows)).toEqual([['first-dlv_a_0', 4], ['first-dlv_b_0', 8], ['first-dlv_d_0', 4]]);
  });

  it('one event, one delivery: a job of one', () => {
    const rows = event('a', 1);
    assignJobs(rows);
    expect(jobsOf(rows)).toEqual([['first-dlv_a_0', 1]]);
  });
});
