import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_STATUS, type AppConfig } from '#libs/core';

/** The schema of `null` in OpenAPI 3.0 (which has no null type: nullable applies to the type beside it). */
const NULL_SCHEMA = { type: 'object', nullable: true, enum: [null] };

/**
 * @nestjs/swagger writes a nullable property of a DTO type as {nullable, type: object, allOf: [$ref]},
 * which no null passes (the allOf still applies; OpenAPI 3.0.3 §4.7.24.1): rewritten as
 * anyOf [$ref, null], which validators and generated clients (`T | null`) read alike.
 */
function nullableRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(nullableRefs) as T;
  if (!node || typeof node !== 'object') return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, nullableRefs(v)])) as Record<string, unknown>;
  const allOf = out.allOf as unknown[] | undefined;
  if (out.nullable === true && allOf?.length === 1 && (out.type === undefined || out.type === 'object')) {
    const { nullable: _n, type: _t, allOf: _a, ...rest } = out;
    return { ...rest, anyOf: [allOf[0], NULL_SCHEMA] } as T;
  }
  return out as T;
}

/** The OpenAPI document of the API, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication, config: Pick<AppConfig, 'prefix'>): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Media Rendering API')
    .setDescription(
      'Render still images (png, jpeg, pdf) synchronously and videos (mp4, gif) asynchronously from templates or edit specs. ' +
        'Every response uses the envelope {success, message, data, pagination?}; errors carry a stable `code`.',
    )
    .setVersion('1.0')
    .addServer(`/${config.prefix}`.replace(/\/$/, ''), 'This deployment')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Workspace API key (pk_live_… or pk_test_…)' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token' }, 'bearerKey')
    .addBearerAuth({
      type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
      description: 'Dashboard session token (with X-Service-Org). On the key routes the member\'s role stands in for scopes (owner: all; member: every :read, renders:write, templates:write, assets:write; else 403 ROLE_REQUIRED); X-Service-Mode: test makes the call a test key\'s (free, watermarked renders)',
    }, 'session')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Service-Org', description: 'Workspace id for a session (GET /auth/memberships lists them)' }, 'org')
    .build();
  const doc = SwaggerModule.createDocument(app, builder, { ignoreGlobalPrefix: true });
  // package.json's "license" (no licence granted yet): change both together.
  doc.info.license = { name: 'UNLICENSED' };
  doc.components ??= {};
  doc.components.schemas = {
    ...doc.components.schemas,
    ErrorEnvelope: {
      type: 'object',
      required: ['success', 'code', 'message', 'data'],
      properties: {
        success: { type: 'boolean', enum: [false] },
        code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
        message: { type: 'string', description: 'Human text; clients branch on code, never on message' },
        data: { type: 'object', nullable: true, additionalProperties: true, description: 'null, except where a code documents a payload' },
        errors: {
          type: 'object',
          additionalProperties: { type: 'array', items: { type: 'string' } },
          description: 'On validation failures: offending path → messages',
        },
        checks: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, passed: { type: 'boolean' }, message: { type: 'string' } } },
        },
        requestId: { type: 'string', description: 'On 5xx answers' },
      },
    },
  };
  return nullableRefs(doc);
}

export function mountOpenApi(app: INestApplication, config: Pick<AppConfig, 'prefix'>): OpenAPIObject {
  const doc = buildOpenApiDocument(app, config);
  const base = config.prefix ? `${config.prefix}/` : '';
  SwaggerModule.setup(`${base}docs`, app, doc, { jsonDocumentUrl: `${base}docs-json`, useGlobalPrefix: false });
  return doc;
}
