import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { isId, validationFailed, type KeyMode } from '#libs/core';
import { forWorkspace, type Orm } from '#libs/db';
import { RenderFeed, renderEventsAfter, type FeedMessage } from '#libs/events';
import { ORM } from '#libs/app';

/** Render events replayed at most on a resume (Last-Event-ID); an older gap: read GET /v1/render. */
const REPLAY_LIMIT = 100;
/** Bytes a slow client may leave unread before its stream is closed (it reconnects with Last-Event-ID). */
const MAX_UNREAD_BYTES = 1 << 20;

/**
 * GET /v1/renders/events (decisions.md "Render event stream"): the workspace's render events and
 * progress as server-sent events, from its RenderFeed channel; on a resume the events after
 * Last-Event-ID first (from the outbox), without repeats; a heartbeat comment every `heartbeatMs`.
 * A closed connection (client abort, a slow reader, shutdown, `maxLifetimeMs` reached) drops its
 * listener and its timers.
 */
@Injectable()
export class RenderEventStreams implements BeforeApplicationShutdown {
  /** Between heartbeat comments (proxies close idle connections; EventSource notices a dead one). */
  heartbeatMs = 15_000;
  /**
   * A stream's longest life: then it ends and the client reconnects with Last-Event-ID through the
   * route's authentication again, so a revoked key, a signed-out session, an expired token or a
   * suspended workspace stops receiving within this time.
   */
  maxLifetimeMs = 5 * 60_000;
  private readonly open = new Set<() => void>();

  constructor(@Inject(ORM) private readonly orm: Orm, private readonly feed: RenderFeed) {}

  /**
   * A test caller's stream carries the workspace's test events only (settle events, progress figures
   * and the resume's backlog of test renders); a live caller's carries every event, each with `livemode`.
   */
  async stream(workspaceId: string, mode: KeyMode, lastEventId: string | undefined, reply: FastifyReply): Promise<void> {
    if (lastEventId !== undefined && !isId('event', lastEventId)) {
      throw validationFailed({ 'headers.last-event-id': ['must be the id of an event this stream sent (evt_…)'] });
    }
    // Subscribed before the backlog is read: an event announced in between is held, then sent once. The
    // dispatcher stamps an event before announcing it, so the backlog may hold an event whose announcement
    // arrives after the held ones are sent: the replayed ids are skipped for the stream's life (at most REPLAY_LIMIT).
    let held: FeedMessage[] | null = [];
    let replayed = new Set<string | undefined>();
    let write: (m: FeedMessage) => void = () => undefined;
    const testOnly = mode === 'test';
    const unsubscribe = await this.feed.subscribe(workspaceId, (m) => {
      if (testOnly && m.livemode !== false) return;
      if (held) held.push(m);
      else if (!m.id || !replayed.has(m.id)) write(m);
    });
    let backlog: FeedMessage[];
    try {
      backlog = lastEventId ? await renderEventsAfter(forWorkspace(this.orm, workspaceId), lastEventId, REPLAY_LIMIT, testOnly ? 'test' : undefined) : [];
    } catch (err) {
      unsubscribe();
      throw err;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      // Never reused once the stream ends (a shutdown's end leaves no idle connection behind).
      connection: 'close',
    });
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.heartbeatMs);
    const lifetime = setTimeout(() => close(), this.maxLifetimeMs);
    const close = () => {
      clearInterval(heartbeat);
      clearTimeout(lifetime);
      unsubscribe();
      this.open.delete(close);
      if (!res.writableEnded) res.end();
    };
    this.open.add(close);
    res.on('close', close);
    // A client gone while the subscription or the backlog was awaited: its 'close' has passed.
    if (res.destroyed || !res.socket || res.socket.destroyed) return close();
    write = (m) => {
      res.write(`${m.id ? `id: ${m.id}\n` : ''}event: ${m.type}\ndata: ${JSON.stringify(m)}\n\n`);
      if (res.writableLength > MAX_UNREAD_BYTES) close();
    };
    res.write('retry: 3000\n: connected\n\n');
    replayed = new Set(backlog.map((m) => m.id));
    for (const m of backlog) write(m);
    for (const m of held) if (!m.id || !replayed.has(m.id)) write(m);
    held = null;
  }

  /** Ends every open stream, so that the HTTP server can close (its connections would hold it). */
  beforeApplicationShutdown(): void {
    for (const close of [...this.open]) close();
  }
}
