import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_STATUS, type AppConfig } from '#libs/core';

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
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Dashboard session token' }, 'session')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Service-Org', description: 'Workspace id for session routes' }, 'org')
    .build();
  const doc = SwaggerModule.createDocument(app, builder, { ignoreGlobalPrefix: true });
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
        data: { nullable: true, description: 'null, except where a code documents a payload' },
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
  return doc;
}

export function mountOpenApi(app: INestApplication, config: Pick<AppConfig, 'prefix'>): OpenAPIObject {
  const doc = buildOpenApiDocument(app, config);
  const base = config.prefix ? `${config.prefix}/` : '';
  SwaggerModule.setup(`${base}docs`, app, doc, { jsonDocumentUrl: `${base}docs-json`, useGlobalPrefix: false });
  return doc;
}
