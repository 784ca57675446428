import { hostname } from 'node:os';
import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { CENSUS_EVERY_MS, EngineCensus } from '#libs/app';

/**
 * Reports the offline engines' programs on this worker's PATH to the census (libs/app EngineCensus)
 * at start and every 30 s, and withdraws the report when the worker stops: the dashboard shows an
 * engine as available when a worker has it, wherever the API runs. A report Redis refuses is tried
 * again at the next beat.
 */
@Injectable()
export class EngineCensusReporter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly worker = `${hostname()}:${process.pid}`;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly census: EngineCensus) {}

  onApplicationBootstrap(): void {
    const beat = () => void this.census.report(this.worker).catch(() => undefined);
    beat();
    this.timer = setInterval(beat, CENSUS_EVERY_MS).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.census.withdraw(this.worker).catch(() => undefined);
  }
}
