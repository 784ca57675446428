import { readFileSync } from 'node:fs';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { buildOpenApiDocument } from '../apps/api/src/openapi.js';
import { ROLE_SCOPES } from '#libs/auth';
import { AUTH_META } from '../apps/api/src/http/decorators.js';
import { startApi, userSession, type TestApi } from './harness.js';
import { routeHandlers, routeOf } from './route-walk.js';

describe('every route declares who may call it (STYLE.md; §5)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('finds scopes or @Public() on each route handler', () => {
    const routes: string[] = [];
    const undeclared: string[] = [];
    for (const { ctrl, name, handler } of routeHandlers(api.app)) {
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
    for (const { ctrl, name, handler } of routeHandlers(api.app)) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, ctrl, name) ?? {}) as Record<string, { index: number }>;
      const body = Object.entries(args).find(([k]) => k.split(':')[0] === String(RouteParamtypes.BODY));
      if (!body) continue;
      const { method, path } = routeOf(ctrl, handler);
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

  it('documents each operation\'s security and its success answer with a schema (issue 21: a generated client knows what it gets)', () => {
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' });
    const problems: string[] = [];
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { security?: unknown; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>)) {
        operations++;
        const label = `${method} ${path}`;
        // @Scopes/@Session name their schemes; @Public() says `security: []` (no credentials) out loud.
        if (!Array.isArray(op.security)) problems.push(`${label}: no security (declare @Scopes, @Session or @Public)`);
        const success = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
        if (success.length === 0) problems.push(`${label}: no 2xx response (@ApiEnvelope)`);
        // A HEAD answer has no body; every other success answer shows its schema.
        for (const [status, res] of success) {
          if (method === 'head' || status === '204') continue;
          const schemas = Object.values(res.content ?? {}).map((c) => c.schema);
          if (schemas.length === 0 || schemas.some((x) => !x)) problems.push(`${label}: ${status} has no schema (@ApiEnvelope)`);
        }
      }
    }
    expect(operations).toBeGreaterThan(70);
    expect(problems).toEqual([]);
    expect(doc.paths['/health'].get!.security).toEqual([]);
    expect(doc.paths['/credits'].get!.security).toEqual([{ session: [], org: [] }]);
  });

  it('keeps openapi.json current (regenerate with `npm run openapi`)', () => {
    const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));
    const fresh = JSON.parse(JSON.stringify(buildOpenApiDocument(api.app, { prefix: 'api' })));
    expect(fresh).toEqual(committed);
  });

  it('documents each key route\'s security and error codes', () => {
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' });
    const op = doc.paths['/v1/keys/current'].get!;
    // The key-only route: a session is not among its schemes.
    expect(op.security).toEqual([{ apiKey: [] }, { bearerKey: [] }]);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '402', '403', '429', '503']);
    expect(JSON.stringify(op.responses['403'])).toContain('IP_NOT_ALLOWED');
    // Redis or the database down (decisions.md "HTTP and errors").
    expect(JSON.stringify(op.responses['503'])).toContain('DEPENDENCY_UNAVAILABLE');
  });
});

/**
 * Issue 18: every key route also serves a dashboard session with X-Service-Org, the member's role
 * standing in for scopes (decisions.md "Sessions (dashboard)"). Each key route found in the
 * controllers' metadata is called with a key holding every scope and with sessions: an owner's
 * session gets the key's answer, a member's too unless the route needs a scope members lack (403
 * ROLE_REQUIRED), no X-Service-Org is 422, another workspace's user 403 NOT_A_MEMBER.
 */
describe('sessions on every key route (issue 18; §5 session tokens)', () => {
  let api: TestApi;
  let ws: { workspaceId: string; liveKey: string };
  const tokens: Record<'owner' | 'member' | 'outsider', string> = { owner: '', member: '', outsider: '' };

  beforeAll(async () => {
    // The key's plan rate would stop a walk of every route within the minute.
    api = await startApi({ RATE_LIMIT_MULTIPLIER: '1000' });
    ws = (await api.cli('workspace:create', '--name', 'Walk', '--plan', 'enterprise')).json as typeof ws;
    const other = (await api.cli('workspace:create', '--name', 'Elsewhere')).json as { workspaceId: string };
    tokens.owner = await userSession(api, ws.workspaceId, '+4915100003001', 'owner');
    tokens.member = await userSession(api, ws.workspaceId, '+4915100003002', 'member');
    tokens.outsider = await userSession(api, other.workspaceId, '+4915100003003', 'owner');
  });
  afterAll(() => api.close());

  it('an owner\'s session gets what a key gets; a member\'s too, within the member\'s scopes; no header 422; a non-member 403', async () => {
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' });
    const walked: string[] = [];
    const problems: string[] = [];
    for (const { ctrl, handler } of routeHandlers(api.app)) {
      const { method, path, auth, stream } = routeOf(ctrl, handler);
      if (auth?.kind !== 'key' || !auth.sessions) continue;
      const label = `${method} ${path}`;
      walked.push(label);
      const url = `/api${path.replace(/\{\w+\}/g, 'x1')}`;
      const call = async (headers: Record<string, string>) => {
        const res = await api.app.inject({ method: method.toUpperCase() as 'GET', url, headers, ...(method === 'get' || method === 'head' ? {} : { payload: {} }) });
        return { status: res.statusCode, code: (res.json() as { code?: string }).code ?? null, errors: (res.json() as { errors?: object }).errors };
      };
      const session = (who: keyof typeof tokens) => ({ authorization: `Bearer ${tokens[who]}`, 'x-service-org': ws.workspaceId });
      const memberMayCall = auth.scopes.every((s) => ROLE_SCOPES.member.has(s));
      // An event stream answers once authenticated and never ends: its own test opens it with sessions (test/render-events.e2e-spec.ts).
      if (!stream) {
        const byKey = await call({ 'x-api-key': ws.liveKey });
        for (const who of memberMayCall ? (['owner', 'member'] as const) : (['owner'] as const)) {
          const got = await call(session(who));
          if (got.status !== byKey.status || got.code !== byKey.code) problems.push(`${label}: ${who} ${got.status} ${got.code}, key ${byKey.status} ${byKey.code}`);
        }
      }
      if (!memberMayCall) {
        const member = await call(session('member'));
        if (member.status !== 403 || member.code !== 'ROLE_REQUIRED') problems.push(`${label}: member ${member.status} ${member.code}, not 403 ROLE_REQUIRED`);
      }
      const noOrg = await call({ authorization: `Bearer ${tokens.owner}` });
      if (noOrg.status !== 422 || !noOrg.errors || !('headers.x-service-org' in noOrg.errors)) problems.push(`${label}: no X-Service-Org ${noOrg.status} ${noOrg.code}`);
      const outsider = await call(session('outsider'));
      if (outsider.status !== 403 || outsider.code !== 'NOT_A_MEMBER') problems.push(`${label}: a non-member ${outsider.status} ${outsider.code}`);
      // OpenAPI: the route names the session schemes beside the key's.
      const security = (doc.paths[path] as Record<string, { security?: unknown[] }>)[method]?.security ?? [];
      if (!JSON.stringify(security).includes('{"session":[],"org":[]}')) problems.push(`${label}: OpenAPI security lacks the session`);
    }
    expect(walked.length).toBeGreaterThan(50);
    expect(walked).toEqual(expect.arrayContaining(['post /v1/render', 'get /v1/render', 'get /v1/templates', 'post /v1/assets', 'post /v1/webhooks']));
    expect(problems).toEqual([]);
  });
});
