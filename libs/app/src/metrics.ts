import { type Metrics } from '#libs/core';
import { CreditBalance } from '#libs/credits';
import { allWorkspaces, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { QUEUE_NAMES, type JobQueues } from '#libs/queue';

/** BullMQ's job states a fleet is watched by. */
const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

/**
 * The numbers read when `/metrics` is scraped, from what every process can read (issue 30): jobs per
 * queue and state (BullMQ's own counts, not counted by hand), credits held by unsettled renders, and
 * the age of the oldest event not yet dispatched (the outbox lag).
 */
export function sampleFleet(m: Metrics, deps: { orm: Orm; queues: JobQueues }): () => void {
  const queues = m.sample(async () => {
    await Promise.all(QUEUE_NAMES.map(async (queue) => {
      const counts = await deps.queues.queue(queue).getJobCounts(...STATES);
      for (const state of STATES) m.queueJobs.set({ queue, state: state === 'prioritized' ? 'waiting_prioritized' : state }, counts[state] ?? 0);
    }));
  });
  const store = m.sample(async () => {
    const em = allWorkspaces(deps.orm);
    const rows = await em.find(CreditBalance, { held: { $gt: 0 } }, { fields: ['held'] });
    m.holdsOpen.set(rows.reduce((n, r) => n + r.held, 0));
    const oldest = await em.findOne(OutboxEvent, { dispatchedAt: null }, { orderBy: { createdAt: 'asc' }, fields: ['createdAt'] });
    m.outboxLag.set(oldest ? Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000) : 0);
  });
  return () => {
    queues();
    store();
  };
}
