import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { openAppDatabase } from '#libs/app';
import { AuthService, FanoutSmsSender, OutboxSmsSender, TwilioSmsSender, type SmsSender } from '#libs/auth';
import { CursorCodec, deriveKey, type AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import type { Orm } from '#libs/db';
import { KeyAuthenticator, KeysService, RequestMeter } from '#libs/keys';
import { createRedis, RedisKeys } from '#libs/redis';
import { WorkspacesService } from '#libs/workspaces';
import { APP_CONFIG, ORM, REDIS } from './tokens.js';

/** The configured SMS adapter; outside production every message also lands in the development outbox. */
function smsSender(config: AppConfig, orm: Orm): SmsSender {
  const outbox = new OutboxSmsSender(orm);
  if (config.sms.provider === 'outbox') return outbox;
  const twilio = new TwilioSmsSender(config.sms);
  return config.env === 'production' ? twilio : new FanoutSmsSender([twilio, outbox]);
}

/**
 * The process-wide pieces every feature module uses: configuration, database, Redis and the
 * services of the libs (plain classes, built here once).
 */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: InfraModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: ORM, useFactory: () => openAppDatabase(config.database) },
        { provide: REDIS, useFactory: () => createRedis(config, 'api') },
        { provide: RedisKeys, useFactory: () => new RedisKeys(config.redisPrefix) },
        { provide: CursorCodec, useFactory: () => new CursorCodec(deriveKey(config.appSecret, 'cursor')) },
        {
          provide: KeysService,
          inject: [ORM, REDIS, RedisKeys],
          useFactory: (orm: Orm, redis: Redis, keys: RedisKeys) => new KeysService(orm, redis, keys, config),
        },
        {
          provide: WorkspacesService,
          inject: [ORM, REDIS, RedisKeys],
          useFactory: (orm: Orm, redis: Redis, keys: RedisKeys) => new WorkspacesService(orm, redis, keys, config),
        },
        {
          provide: KeyAuthenticator,
          inject: [ORM, REDIS, RedisKeys, KeysService],
          useFactory: (orm: Orm, redis: Redis, keys: RedisKeys, svc: KeysService) => new KeyAuthenticator(orm, redis, keys, svc),
        },
        {
          provide: AuthService,
          inject: [ORM, REDIS, RedisKeys],
          useFactory: (orm: Orm, redis: Redis, keys: RedisKeys) => new AuthService(orm, redis, keys, config, smsSender(config, orm)),
        },
        { provide: CreditsService, inject: [ORM], useFactory: (orm: Orm) => new CreditsService(orm, { lowThreshold: config.creditsLowThreshold }) },
        { provide: RequestMeter, inject: [REDIS, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new RequestMeter(redis, keys, config.rateLimitMultiplier) },
      ],
      exports: [
        APP_CONFIG, ORM, REDIS, RedisKeys, CursorCodec, KeysService, WorkspacesService, KeyAuthenticator, RequestMeter, AuthService, CreditsService,
      ],
    };
  }

  constructor(
    @Inject(ORM) private readonly orm: Orm,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.orm.close(true);
    this.redis.disconnect();
  }
}
