import { staleJobs } from './dispatcher.js';

describe('the stale sweep\'s jobs', () => {
  it('hands deliveries never attempted back to their event\'s job, and the others (attempted, or redeliveries) to their own job', () => {
    const jobs = staleJobs([
      { id: 'dlv_1', eventId: 'evt_a', sequence: 0, attempts: 0 },
      { id: 'dlv_2', eventId: 'evt_b', sequence: 0, attempts: 2 },
      { id: 'dlv_3', eventId: 'evt_a', sequence: 0, attempts: 0 },
      { id: 'dlv_4', eventId: 'evt_c', sequence: 0, attempts: 0 },
      { id: 'dlv_5', eventId: 'evt_c', sequence: 1, attempts: 0 },
    ]);
    // The event job's id is the event's: a job still waiting for it takes these instead of a second one.
    expect(jobs.events).toEqual([{ eventId: 'evt_a', deliveryIds: ['dlv_1', 'dlv_3'] }, { eventId: 'evt_c', deliveryIds: ['dlv_4'] }]);
    // A redelivery's job was enqueued by the API under the delivery's id.
    expect(jobs.retries).toEqual([{ deliveryId: 'dlv_2', after: 2 }, { deliveryId: 'dlv_5', after: 0 }]);
  });
});
