import { readFileSync } from 'node:fs';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import { buildOpenApiDocument } from '../apps/api/src/openapi.js';
import { AUTH_META } from '../apps/api/src/http/decorators.js';
import { startApi, type TestApi } from './harness.js';

type Controller = new (...a: unknown[]) => object;

/** Every route handler of the application's controllers. */
function* routeHandlers(api: TestApi): Generator<{ ctrl: Controller; name: string; handler: object }> {
  for (const mod of api.app.get(ModulesContainer).values()) {
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

describe('every route declares who may call it (STYLE.md; §5)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('finds scopes or @Public() on each route handler', () => {
    const routes: string[] = [];
    const undeclared: string[] = [];
    for (const { ctrl, name, handler } of routeHandlers(api)) {
      const label = `${ctrl.name}.${name} (${Reflect.getMetadata(PATH_METADATA, handler)})`;
      routes.push(label);
      if (!Reflect.getMetadata(AUTH_META, handler) && !Reflect.getMetadata(AUTH_META, ctrl)) undeclared.push(label);
    }
    expect(routes.length).toBeGreaterThanOrEqual(3);
    expect(undeclared).toEqual([]);
  });

  it('takes every request body as a DTO and documents it in OpenAPI (decisions.md "Envelope and errors": the pipe checks it)', () => {
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' });
    const bodies: string[] = [];
    const problems: string[] = [];
    for (const { ctrl, name, handler } of routeHandlers(api)) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, ctrl, name) ?? {}) as Record<string, { index: number }>;
      const body = Object.entries(args).find(([k]) => k.split(':')[0] === String(RouteParamtypes.BODY));
      if (!body) continue;
      const path = `/${Reflect.getMetadata(PATH_METADATA, ctrl)}/${Reflect.getMetadata(PATH_METADATA, handler)}`.replace(/\/+/g, '/').replace(/\/$/, '').replace(/:(\w+)/g, '{$1}');
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number].toLowerCase();
      const label = `${method} ${path}`;
      bodies.push(label);
      const type = (Reflect.getMetadata('design:paramtypes', ctrl.prototype, name) as unknown[])[body[1].index];
      if (typeof type !== 'function' || [Object, Array, String, Number, Boolean].includes(type as never)) problems.push(`${label}: the body is not a DTO class`);
      const op = (doc.paths[path] as Record<string, { requestBody?: unknown }> | undefined)?.[method];
      if (!op?.requestBody) problems.push(`${label}: no requestBody in the OpenAPI document`);
    }
    expect(bodies).toEqual(expect.arrayContaining([
      'post /v1/render', 'post /v1/render/estimate', 'post /v1/webhooks', 'patch /v1/webhooks/{id}', 'post /organization/webhooks',
      'patch /organization/webhooks/{id}', 'patch /organization/callback', 'post /v1/templates/import', 'post /organization/templates',
      'patch /organization/templates/{id}', 'post /organization/templates/{id}/publish', 'post /organization/api-keys', 'post /auth/send-otp',
    ]));
    expect(problems).toEqual([]);
  });

  it('keeps openapi.json current (regenerate with `npm run openapi`)', () => {
    const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));
    const fresh = JSON.parse(JSON.stringify(buildOpenApiDocument(api.app, { prefix: 'api' })));
    expect(fresh).toEqual(committed);
  });

  it('documents each key route\'s security and error codes', () => {
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' });
    const op = doc.paths['/v1/keys/current'].get!;
    expect(op.security).toEqual(expect.arrayContaining([{ apiKey: [] }, { bearerKey: [] }]));
    expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '402', '403', '429', '503']);
    expect(JSON.stringify(op.responses['403'])).toContain('IP_NOT_ALLOWED');
    // Redis or the database down (decisions.md "HTTP and errors").
    expect(JSON.stringify(op.responses['503'])).toContain('DEPENDENCY_UNAVAILABLE');
  });
});
