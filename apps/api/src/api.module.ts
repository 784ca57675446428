import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import type { AppConfig } from '#libs/core';
import { PROCESS_ROLES, ServicesModule } from '#libs/app';
import { AssetsModule } from './assets/assets.module.js';
import { AuthModule } from './auth/auth.module.js';
import { CaptionsModule } from './captions/captions.module.js';
import { ContactsModule } from './contacts/contacts.module.js';
import { DriveModule } from './drive/drive.module.js';
import { CreditsModule } from './credits/credits.module.js';
import { FilesModule } from './files/files.module.js';
import { HealthModule } from './health/health.module.js';
import { AuthGuard } from './http/auth.guard.js';
import { ApiExceptionFilter } from './http/exception.filter.js';
import { KeyAuthentication } from './http/key-auth.js';
import { SessionGuard, SessionStrategy } from './http/session.strategy.js';
import { IntegrationsModule } from './integrations/integrations.module.js';
import { KeysModule } from './keys/keys.module.js';
import { OrganizationModule } from './organization/organization.module.js';
import { RendersModule } from './renders/renders.module.js';
import { TemplatesModule } from './templates/templates.module.js';
import { SheetsModule } from './sheets/sheets.module.js';
import { MessagingModule } from './messaging/messaging.module.js';
import { VoiceModule } from './voice/voice.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { WorkflowsModule } from './workflows/workflows.module.js';

@Module({})
export class ApiModule {
  /** `extraModules`: mounted beside the feature modules (tests mount probe routes this way). */
  static forRoot(config: AppConfig, extraModules: Type[] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ServicesModule.forRoot(config, PROCESS_ROLES.api), PassportModule,
        FilesModule, HealthModule, KeysModule, AuthModule, CreditsModule, OrganizationModule, WebhooksModule, TemplatesModule, RendersModule, AssetsModule, IntegrationsModule, CaptionsModule, VoiceModule, MessagingModule, SheetsModule, ContactsModule, DriveModule, WorkflowsModule, ...extraModules],
      providers: [
        KeyAuthentication, SessionStrategy, SessionGuard,
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
