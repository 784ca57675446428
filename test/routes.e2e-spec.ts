import { readFileSync } from 'node:fs';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { buildOpenApiDocument } from '../apps/api/src/openapi.js';
import { AUTH_META } from '../apps/api/src/http/decorators.js';
import { startApi, type TestApi } from './harness.js';

describe('every route declares who may call it (STYLE.md; §5)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('finds scopes or @Public() on each route handler', () => {
    const container = api.app.get(ModulesContainer);
    const routes: string[] = [];
    const undeclared: string[] = [];
    for (const mod of container.values()) {
      for (const wrapper of mod.controllers.values()) {
        const ctrl = wrapper.metatype as (new (...a: unknown[]) => object) | null;
        if (!ctrl) continue;
        for (const name of Object.getOwnPropertyNames(ctrl.prototype)) {
          const handler = (ctrl.prototype as Record<string, unknown>)[name];
          if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
          const label = `${ctrl.name}.${name} (${Reflect.getMetadata(PATH_METADATA, handler)})`;
          routes.push(label);
          if (!Reflect.getMetadata(AUTH_META, handler) && !Reflect.getMetadata(AUTH_META, ctrl)) undeclared.push(label);
        }
      }
    }
    expect(routes.length).toBeGreaterThanOrEqual(3);
    expect(undeclared).toEqual([]);
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
    expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '402', '403', '429']);
    expect(JSON.stringify(op.responses['403'])).toContain('IP_NOT_ALLOWED');
  });
});
