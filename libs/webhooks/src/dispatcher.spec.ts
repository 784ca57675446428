import { staleJobs } from './dispatcher.js';

describe('the stale sweep\'s jobs', () => {
  it('hands deliveries never attempted back to their event\'s job, and the others to a retry job that knows their attempts', () => {
    const jobs = staleJobs([
      { id: 'dlv_1', eventId: 'evt_a', attempts: 0 },
      { id: 'dlv_2', eventId: 'evt_b', attempts: 2 },
      { id: 'dlv_3', eventId: 'evt_a', attempts: 0 },
      { id: 'dlv_4', eventId: 'evt_c', attempts: 0 },
    ]);
    // The event job's id is the event's: a job still waiting for it takes these instead of a second one.
    expect(jobs.events).toEqual([{ eventId: 'evt_a', deliveryIds: ['dlv_1', 'dlv_3'] }, { eventId: 'evt_c', deliveryIds: ['dlv_4'] }]);
    expect(jobs.retries).toEqual([{ deliveryId: 'dlv_2', after: 2 }]);
  });
});
