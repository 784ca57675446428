import type { EntityManager, FilterQuery } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ID_PREFIXES, isLivemode, ulid, type KeyMode } from '#libs/core';
import { logOutages, type RedisKeys } from '#libs/redis';
import { OutboxEvent } from './outbox-event.entity.js';

/** One message of a workspace's render feed (GET /v1/renders/events). */
export interface FeedMessage {
  /** The outbox event's id (render.* events: resumable with Last-Event-ID); absent on progress figures. */
  id?: string;
  /** A §6 render event, or `render.progress` (the feed's own: a running render's figure). */
  type: string;
  created: string;
  /** The render's mode: false for a test render (a test key's or a test session's stream carries only these). */
  livemode: boolean;
  data: Record<string, unknown>;
}

/** A render's progress figures go out at most this often (across every worker: one Redis key per render). */
export const PROGRESS_EVERY_MS = 500;

/** SET NX PX the render's throttle key and, when it was free, PUBLISH: one round trip per figure. */
const PROGRESS_SCRIPT = `
if redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then
  redis.call('PUBLISH', KEYS[2], ARGV[2])
  return 1
end
return 0
`;

interface FeedRedis extends Redis {
  feedProgress(throttleKey: string, channel: string, everyMs: number, message: string): Promise<number>;
}

type Listener = (message: FeedMessage) => void;

/**
 * The live feed of a workspace's renders, fanned out to every API process through Redis pub/sub
 * (one channel per workspace, so a subscriber never receives another workspace's messages):
 * the outbox dispatcher announces each batch's render.* events (`announce`), the video workers the
 * progress of running renders (`progress`, throttled per render); each API process holds one
 * subscriber connection, subscribed to a workspace's channel while it has listeners there.
 */
export class RenderFeed {
  private readonly redis: FeedRedis;
  private subscriber: Redis | null = null;
  /** Channel → this process's listeners; subscribed in Redis while the set is not empty. */
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(redis: Redis, private readonly keys: RedisKeys) {
    redis.defineCommand('feedProgress', { numberOfKeys: 2, lua: PROGRESS_SCRIPT });
    this.redis = redis as FeedRedis;
  }

  /** Publishes the render.* events among outbox rows (the dispatcher's batch), each on its workspace's channel. */
  async announce(events: readonly { id: string; workspaceId: string; type: string; mode: KeyMode; createdAt: Date; data: Record<string, unknown> }[]): Promise<void> {
    const renders = events.filter((e) => e.type.startsWith('render.'));
    if (!renders.length) return;
    const pipeline = this.redis.pipeline();
    for (const e of renders) {
      const message: FeedMessage = { id: e.id, type: e.type, created: e.createdAt.toISOString(), livemode: isLivemode(e.mode), data: e.data };
      pipeline.publish(this.keys.renderFeed(e.workspaceId), JSON.stringify(message));
    }
    await pipeline.exec();
  }

  /** A running render's progress (0..1), published unless another figure of it went out in the last PROGRESS_EVERY_MS. */
  async progress(workspaceId: string, renderId: string, mode: KeyMode, progress: number): Promise<boolean> {
    const message: FeedMessage = { type: 'render.progress', created: new Date().toISOString(), livemode: isLivemode(mode), data: { id: renderId, status: 'rendering', progress: Math.round(progress * 1000) / 1000 } };
    const sent = await this.redis.feedProgress(this.keys.renderFeedThrottle(workspaceId, renderId), this.keys.renderFeed(workspaceId), PROGRESS_EVERY_MS, JSON.stringify(message));
    return sent === 1;
  }

  /** Calls `listener` with each message of the workspace until the returned function is called (resolves once subscribed). */
  async subscribe(workspaceId: string, listener: Listener): Promise<() => void> {
    const channel = this.keys.renderFeed(workspaceId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      this.subscribed.set(channel, this.connection().subscribe(channel));
    }
    set.add(listener);
    await this.subscribed.get(channel);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const current = this.listeners.get(channel);
      current?.delete(listener);
      if (current && current.size === 0) {
        this.listeners.delete(channel);
        this.subscribed.delete(channel);
        void this.subscriber?.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /** Listeners of this process (tests: none left behind once every stream closed). */
  listenerCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.listeners.clear();
    this.subscribed.clear();
  }

  private connection(): Redis {
    if (!this.subscriber) {
      const sub = this.redis.duplicate();
      logOutages(sub, 'render-feed');
      sub.on('message', (channel: string, text: string) => {
        const set = this.listeners.get(channel);
        if (!set) return;
        let message: FeedMessage;
        try {
          message = JSON.parse(text) as FeedMessage;
        } catch {
          return;
        }
        for (const listener of set) listener(message);
      });
      this.subscriber = sub;
    }
    return this.subscriber;
  }
}

/**
 * The workspace's render events after `afterId` that the dispatcher has announced, oldest first (a
 * stream resuming with Last-Event-ID; ids are ULIDs, so they sort by time); only those of `mode` when
 * given (a test caller's stream). `em` is the workspace's.
 */
export function renderEventsAfter(em: EntityManager, afterId: string, limit: number, mode?: KeyMode): Promise<FeedMessage[]> {
  return renderEvents(em, { id: { $gt: afterId }, dispatchedAt: { $ne: null }, ...(mode ? { mode } : {}) }, limit);
}

/** A render's events read at most (a render writes three: queued, started, and one settle). */
export const RENDER_EVENTS_LIMIT = 20;
/** How far before the render's creation its events' scan starts: another process's clock may be behind. */
const CLOCK_SKEW_MS = 60_000;

/**
 * One render's events, oldest first (GET /v1/render/{id}/events), whether dispatched or not. The
 * scan starts at the first event id its creation time allows, less a minute of clock skew (ids are
 * ULIDs: time first), so it reads the outbox from the render's birth on, not the workspace's history. `em` is the workspace's.
 */
export function renderEventsOf(em: EntityManager, renderId: string, createdAt: Date, limit = RENDER_EVENTS_LIMIT): Promise<FeedMessage[]> {
  const from = `${ID_PREFIXES.event}_${ulid(Math.max(0, createdAt.getTime() - CLOCK_SKEW_MS)).slice(0, 10)}${'0'.repeat(16)}`;
  return renderEvents(em, { id: { $gte: from }, data: { id: renderId } }, limit);
}

/** Render events (`render.*`) matching `where`, oldest first, as the feed sends them. */
async function renderEvents(em: EntityManager, where: FilterQuery<OutboxEvent> & object, limit: number): Promise<FeedMessage[]> {
  const rows = await em.find(OutboxEvent, { ...where, type: { $like: 'render.%' } }, { orderBy: { id: 'asc' }, limit, fields: ['id', 'type', 'createdAt', 'mode', 'data'] });
  return rows.map((r) => ({ id: r.id, type: r.type, created: r.createdAt.toISOString(), livemode: isLivemode(r.mode), data: r.data }));
}
