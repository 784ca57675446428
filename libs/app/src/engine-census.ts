import type { Redis } from 'ioredis';
import { onPath } from '#libs/core';
import { offlineEngine, OFFLINE_PROGRAM_NAMES, type IntegrationProvider, type OfflineEngineState } from '#libs/integrations';
import type { RedisKeys } from '#libs/redis';

/** How often a worker reports, and how long a report counts. */
export const CENSUS_EVERY_MS = 30_000;
export const CENSUS_TTL_MS = 3 * CENSUS_EVERY_MS;

/** An offline engine's state, and whose programs it was read from. */
export type FleetEngineState = OfflineEngineState & { source: 'workers' | 'this machine' };

interface Report {
  programs: string[];
  at: number;
}

/**
 * Which offline engines the fleet runs (issue 29): the programs are the workers' business (a
 * transcription or a voice-over runs on a worker, and the Docker images install them in the worker's
 * image only), so each worker reports the ones on its PATH into one Redis hash every 30 s, and the
 * API's dashboard reads it. An engine is available when one worker reported within 90 s has every
 * program it runs; with no report at all (no worker started yet, or the API and the worker as one
 * process in development) the API's own PATH answers, as before.
 */
export class EngineCensus {
  constructor(private readonly redis: Redis, private readonly keys: RedisKeys) {}

  /** A worker's report: the programs on its PATH (`has` is for tests). */
  async report(worker: string, has: (program: string) => boolean = (p) => !!onPath(p), now = Date.now()): Promise<void> {
    const report: Report = { programs: OFFLINE_PROGRAM_NAMES.filter((p) => has(p)), at: now };
    await this.redis.hset(this.keys.offlineEngines(), worker, JSON.stringify(report));
  }

  /** A stopping worker's report goes with it. */
  async withdraw(worker: string): Promise<void> {
    await this.redis.hdel(this.keys.offlineEngines(), worker);
  }

  /** The fresh reports' program sets (stale ones are removed as they are seen); empty when none. */
  private async fleet(now: number): Promise<Set<string>[]> {
    const all = await this.redis.hgetall(this.keys.offlineEngines());
    const fresh: Set<string>[] = [];
    const stale: string[] = [];
    for (const [worker, raw] of Object.entries(all)) {
      let report: Report | null = null;
      try { report = JSON.parse(raw) as Report; } catch { /* stale below */ }
      if (report && Array.isArray(report.programs) && typeof report.at === 'number' && now - report.at <= CENSUS_TTL_MS) fresh.push(new Set(report.programs));
      else stale.push(worker);
    }
    if (stale.length) await this.redis.hdel(this.keys.offlineEngines(), ...stale);
    return fresh;
  }

  /**
   * Each provider's offline engine in the fleet, from one read of the census: available when a worker
   * has all its programs; otherwise missing, naming what the best-equipped worker lacks. With no fresh
   * report, this machine's PATH.
   */
  async states(providers: readonly IntegrationProvider[], now = Date.now()): Promise<Map<IntegrationProvider, FleetEngineState>> {
    const fleet = await this.fleet(now);
    return new Map(providers.map((provider): [IntegrationProvider, FleetEngineState] => {
      if (!fleet.length) return [provider, { ...offlineEngine(provider), source: 'this machine' }];
      const best = fleet.map((programs) => offlineEngine(provider, (p) => programs.has(p))).reduce((a, b) => (b.missing.length < a.missing.length ? b : a));
      return [provider, { ...best, source: 'workers' }];
    }));
  }

  async state(provider: IntegrationProvider, now = Date.now()): Promise<FleetEngineState> {
    return (await this.states([provider], now)).get(provider)!;
  }
}
