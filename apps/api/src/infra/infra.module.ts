import { Global, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { AppServices, fromServices, PROCESS_ROLES } from '#libs/app';
import { AssetsService } from '#libs/assets';
import { AuthService } from '#libs/auth';
import { TranscriptionsService } from '#libs/captions';
import { CursorCodec, type AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { RenderFeed } from '#libs/events';
import { IntegrationsService } from '#libs/integrations';
import { KeyAuthenticator, KeysService, RequestMeter } from '#libs/keys';
import { RedisKeys } from '#libs/redis';
import { TemplatesService } from '#libs/templates';
import { WebhookEndpoints } from '#libs/webhooks';
import { WorkspacesService } from '#libs/workspaces';
import { APP_CONFIG, ORM, REDIS, STORAGE } from './tokens.js';

/** What the API's modules inject from AppServices: the infrastructure under tokens, the services under their classes. */
const PROVIDED = [
  fromServices(APP_CONFIG, 'config'), fromServices(ORM, 'orm'), fromServices(REDIS, 'redis'), fromServices(STORAGE, 'storage'),
  fromServices(RedisKeys, 'redisKeys'), fromServices(CursorCodec, 'cursors'), fromServices(KeysService, 'keys'),
  fromServices(WorkspacesService, 'workspaces'), fromServices(KeyAuthenticator, 'keyAuthenticator'), fromServices(RequestMeter, 'meter'),
  fromServices(AuthService, 'auth'), fromServices(CreditsService, 'credits'), fromServices(TemplatesService, 'templates'),
  fromServices(WebhookEndpoints, 'webhookEndpoints'), fromServices(AssetsService, 'assets'),
  fromServices(IntegrationsService, 'integrations'), fromServices(TranscriptionsService, 'transcriptions'),
  fromServices(RenderFeed, 'renderFeed'),
];

/**
 * The process-wide pieces every feature module uses: the API's AppServices (libs/app builds the
 * libs' services once) and its members as providers; closes them when the application stops.
 */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: InfraModule,
      providers: [{ provide: AppServices, useFactory: () => AppServices.open(config, PROCESS_ROLES.api) }, ...PROVIDED],
      exports: [AppServices, ...PROVIDED.map((p) => p.provide)],
    };
  }

  constructor(private readonly services: AppServices) {}

  async onApplicationShutdown(): Promise<void> {
    await this.services.close();
  }
}
