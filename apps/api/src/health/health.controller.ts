import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Redis } from 'ioredis';
import { ApiError, ok, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { redisEvictionPolicy } from '#libs/redis';
import type { StorageDriver } from '#libs/storage';
import { ApiEnvelope, ApiErrors, Public } from '../http/decorators.js';
import { LivenessDto, ReadinessDto } from './health.dto.js';
import { APP_CONFIG, ORM, REDIS, STORAGE } from '#libs/app';

type Check = { ok: boolean; detail?: string };

/** A check that has not answered in this long counts as failed: readiness answers within it, whatever is down. */
const CHECK_TIMEOUT_MS = 2_500;

async function run(fn: () => Promise<string | undefined | void>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
    });
    const detail = await Promise.race([fn(), timeout]);
    return detail ? { ok: true, detail } : { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(ORM) private readonly orm: Orm,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(STORAGE) private readonly storage: StorageDriver,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiEnvelope(LivenessDto)
  live() {
    return ok({ status: 'ok' });
  }

  @Get('ready')
  @Public()
  @ApiOperation({ summary: 'Readiness: database, Redis (noeviction) and storage (the folder written, or the bucket reached); a 503 names each one down' })
  @ApiEnvelope(ReadinessDto)
  @ApiErrors('NOT_READY')
  async ready() {
    const [database, redis, storage] = await Promise.all([
      run(async () => {
        await this.orm.em.getConnection().execute('select 1');
        return this.config.database.kind;
      }),
      run(async () => {
        await this.redis.ping();
        const policy = await redisEvictionPolicy(this.redis);
        if (policy !== 'noeviction') throw new Error(`maxmemory-policy is ${policy}; queues need noeviction`);
      }),
      run(async () => {
        await this.storage.checkReady();
        return this.config.storage.driver;
      }),
    ]);
    const checks = { database, redis, storage };
    const failing = Object.entries(checks).filter(([, c]) => !c.ok).map(([name, c]) => `${name}: ${c.detail}`);
    if (failing.length) throw new ApiError('NOT_READY', `Not ready: ${failing.join('; ')}`, { data: checks });
    return ok({ status: 'ready', checks });
  }
}
