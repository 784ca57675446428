import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import fastifyMultipart from '@fastify/multipart';
import type { RawServerDefault } from 'fastify';
import { AppLogger, metrics, metricsAuthorized, nestLogLevels, newId, REQUEST_ID, withLogContext, type AppConfig } from '#libs/core';
import { JobQueues } from '#libs/queue';
import { ORM, sampleFleet } from '#libs/app';
import { ApiModule } from './api.module.js';
import { mountDashboard } from './dashboard/serve.js';
import { MAX_JSON_DEPTH, clientErrorHandler, frameworkError, jsonNestsDeeperThan, refuseNul, tooDeep } from './http/client-errors.js';
import { keepRawBody, parseForm } from './http/raw-body.js';
import { validationPipe } from './http/validation.js';
import { mountOpenApi } from './openapi.js';


/** Builds the API application (not yet listening): used by main.ts, the tests and the benchmarks. */
export async function createApiApp(config: AppConfig, opts: { extraModules?: Type[] } = {}): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('request');
    },
    trustProxy: false,
    logger: false,
    // Bad input the server, the router or the parser refuses still answers the envelope (http/client-errors.ts).
    clientErrorHandler,
    frameworkErrors: frameworkError,
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(config, opts.extraModules), adapter, {
    logger: config.logLevel === 'silent' ? false : new AppLogger({ json: config.logFormat === 'json', logLevels: nestLogLevels(config.logLevel) }),
    abortOnError: false,
  });
  app.setGlobalPrefix(config.prefix);
  app.useGlobalPipes(validationPipe());
  const fastify = app.getHttpAdapter().getInstance();
  // JSON as Fastify parses it, except that an empty body is no body: many HTTP clients send
  // `Content-Type: application/json` with nothing after it on a bodiless POST (cancel, test, publish…).
  // A body nested deeper than MAX_JSON_DEPTH is refused before parsing (400), so no DTO recurses through it.
  const json = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit: config.bodyLimitBytes }, (req, body, done) => {
    keepRawBody(req, body);
    const text = body.toString('utf8');
    if (body.length === 0) done(null, undefined);
    else if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) done(tooDeep(), undefined);
    else void json(req, text, done);
  });
  // Form bodies only where a provider posts them (Twilio's status callbacks), the bytes kept for the signature.
  app.useBodyParser<RawServerDefault>('application/x-www-form-urlencoded', { bodyLimit: 64 * 1024 }, (req, body, done) => {
    try {
      keepRawBody(req, body);
      done(null, parseForm(req.url ?? '', body));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // Uploads (POST /v1/assets) stream their parts; each route sets its limits (apps/api/src/assets/upload.ts).
  await app.register(fastifyMultipart as never, { throwFileSizeLimit: true });
  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    done();
  });
  fastify.addHook('preValidation', refuseNul);
  // Every log line written while a request is handled carries its id (and the render's, once made).
  fastify.addHook('preHandler', (req, _reply, done) => withLogContext({ requestId: req.id }, done));
  mountMetrics(app, config);
  mountOpenApi(app, config);
  // The web dashboard at `/` (apps/dashboard, built by `npm run build`).
  await mountDashboard(app, config);
  await app.init();
  return app;
}

/**
 * Prometheus metrics (issue 30): each answer counted by its route template, method and status with its
 * time; `GET /metrics` (outside the API prefix) serves them with the fleet's sampled numbers to a
 * bearer of METRICS_TOKEN; without the token configured there is no such route (404).
 */
function mountMetrics(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance();
  const m = metrics('api');
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    m.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    m.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
    done();
  });
  if (!config.metrics.token) return;
  const unsample = sampleFleet(m, { orm: app.get(ORM), queues: app.get(JobQueues) });
  fastify.addHook('onClose', (_instance, done) => {
    unsample();
    done();
  });
  fastify.get('/metrics', async (req, reply) => {
    if (!metricsAuthorized(config.metrics.token, req.headers.authorization)) return reply.code(401).header('www-authenticate', 'Bearer').send({ code: 'INVALID_TOKEN', message: 'The metrics token is missing or wrong' });
    return reply.header('content-type', m.contentType).send(await m.exposition());
  });
}
