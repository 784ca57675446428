import type { Redis } from 'ioredis';
import { onPath } from '#libs/core';
import { offlineEngine, OFFLINE_PROGRAM_NAMES, type IntegrationProvider, type OfflineEngineState } from '#libs/integrations';
import type { RedisKeys } from '#libs/redis';

/** How often a worker reports, and how long a report lives in Redis. */
export const CENSUS_EVERY_MS = 30_000;
export const CENSUS_TTL_MS = 3 * CENSUS_EVERY_MS;

/** An offline engine's state, and whose programs it was read from. */
export type FleetEngineState = OfflineEngineState & { source: 'workers' | 'this machine' };

/**
 * Which offline engines the fleet runs (issue 29): the programs are the workers' business (a
 * transcription or a voice-over runs on a worker, and the Docker images install them in the worker's
 * image only), so each worker reports the ones on its PATH every 30 s, as a key that Redis expires
 * after 90 s (no clock but Redis' decides what is fresh) listed in one set, and the API's dashboard
 * reads them. An engine is available when one reporting worker has every program it runs; with no
 * report (no worker started yet, or the API and the worker as one process in development), or with
 * Redis out, the API's own PATH answers, as before.
 */
export class EngineCensus {
  constructor(private readonly redis: Redis, private readonly keys: RedisKeys) {}

  /** A worker's report: the programs on its PATH (`has` and `ttlMs` are for tests). */
  async report(worker: string, has: (program: string) => boolean = (p) => !!onPath(p), ttlMs = CENSUS_TTL_MS): Promise<void> {
    const programs = OFFLINE_PROGRAM_NAMES.filter((p) => has(p));
    await this.redis.multi().set(this.keys.offlineEngine(worker), JSON.stringify(programs), 'PX', ttlMs).sadd(this.keys.offlineEngines(), worker).exec();
  }

  /** A stopping worker's report goes with it. */
  async withdraw(worker: string): Promise<void> {
    await this.redis.multi().del(this.keys.offlineEngine(worker)).srem(this.keys.offlineEngines(), worker).exec();
  }

  /** The reporting workers' program sets; a worker whose report expired leaves the set. */
  private async fleet(): Promise<Set<string>[]> {
    const workers = await this.redis.smembers(this.keys.offlineEngines());
    if (!workers.length) return [];
    const reports = await this.redis.mget(workers.map((w) => this.keys.offlineEngine(w)));
    const gone = workers.filter((_, i) => reports[i] === null);
    if (gone.length) await this.redis.srem(this.keys.offlineEngines(), ...gone);
    return reports.flatMap((raw) => {
      try {
        const programs = raw === null ? null : (JSON.parse(raw) as unknown);
        return Array.isArray(programs) ? [new Set(programs.map(String))] : [];
      } catch {
        return [];
      }
    });
  }

  /**
   * Each provider's offline engine in the fleet, from one read of the census: available when a worker
   * has all its programs; otherwise missing, naming what the best-equipped worker lacks. With no
   * report, or Redis out, this machine's PATH.
   */
  async states(providers: readonly IntegrationProvider[]): Promise<Map<IntegrationProvider, FleetEngineState>> {
    const fleet = await this.fleet().catch(() => []);
    return new Map(providers.map((provider): [IntegrationProvider, FleetEngineState] => {
      if (!fleet.length) return [provider, { ...offlineEngine(provider), source: 'this machine' }];
      const best = fleet.map((programs) => offlineEngine(provider, (p) => programs.has(p))).reduce((a, b) => (b.missing.length < a.missing.length ? b : a));
      return [provider, { ...best, source: 'workers' }];
    }));
  }

  async state(provider: IntegrationProvider): Promise<FleetEngineState> {
    return (await this.states([provider])).get(provider)!;
  }
}
