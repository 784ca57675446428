import { Module, RequestMethod, type NestModule } from '@nestjs/common';
import { ApplicationConfig } from '@nestjs/core';
import { FilesController } from './files.controller.js';

type ExcludedRoute = NonNullable<ReturnType<ApplicationConfig['getGlobalPrefixOptions']>['exclude']>[number];

/** `/files/*` is served at the root of the host, not under API_PREFIX (house decisions, "Running it": `/files/...`). */
const OUTSIDE_PREFIX: ExcludedRoute = { path: 'files/*', requestMethod: RequestMethod.ALL, pathRegex: /^\/files(?:\/|$)/ };

/** The route that serves stored files (the driver is ServicesModule's STORAGE, libs/app). */
@Module({ controllers: [FilesController] })
export class FilesModule implements NestModule {
  constructor(private readonly app: ApplicationConfig) {}

  /**
   * Nest calls this during app.init(), after app.ts has set the global prefix and before routes are
   * registered: the one point where a module can take its routes out of the prefix.
   */
  configure(): void {
    const options = this.app.getGlobalPrefixOptions();
    this.app.setGlobalPrefixOptions({ ...options, exclude: [...(options.exclude ?? []), OUTSIDE_PREFIX] });
  }
}
