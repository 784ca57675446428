import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AUTH_META, STREAM_META, type RouteAuth } from '../apps/api/src/http/decorators.js';

export type Controller = new (...a: unknown[]) => object;

/** Every route handler of the application's controllers (their metadata: new routes are found without a list). */
export function* routeHandlers(app: NestFastifyApplication): Generator<{ ctrl: Controller; name: string; handler: object }> {
  for (const mod of app.get(ModulesContainer).values()) {
    for (const wrapper of mod.controllers.values()) {
      const ctrl = wrapper.metatype as Controller | null;
      if (!ctrl) continue;
      for (const name of Object.getOwnPropertyNames(ctrl.prototype)) {
        const handler = (ctrl.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        yield { ctrl, name, handler };
      }
    }
  }
}

/**
 * A handler's method, its path as OpenAPI writes it (`/v1/render/{id}`, no prefix), who may call it,
 * and whether it answers a never-ending event stream (a caller that waits for the end skips it).
 */
export function routeOf(ctrl: Controller, handler: object): { method: string; path: string; auth: RouteAuth | undefined; stream: boolean } {
  const path = `/${Reflect.getMetadata(PATH_METADATA, ctrl)}/${Reflect.getMetadata(PATH_METADATA, handler)}`.replace(/\/+/g, '/').replace(/\/$/, '').replace(/:(\w+)/g, '{$1}');
  const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number].toLowerCase();
  const auth = (Reflect.getMetadata(AUTH_META, handler) ?? Reflect.getMetadata(AUTH_META, ctrl)) as RouteAuth | undefined;
  return { method, path, auth, stream: Reflect.getMetadata(STREAM_META, handler) === true };
}
