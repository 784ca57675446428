/**
 * E2E harness: a fresh database (SQLite file or PostgreSQL database), a fresh Redis key prefix and
 * a fresh data folder per call, so no test depends on another's data. Under TEST_STORAGE=s3 (the
 * jest project `s3`) stored files go to a fresh bucket on the tests' S3 server instead of the folder.
 */
import { execFile } from 'node:child_process';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueEvents } from 'bullmq';
import pg from 'pg';
import { AuthService, type Role } from '#libs/auth';
import { loadConfig, type AppConfig } from '#libs/core';
import type { JobQueues, QueueName } from '#libs/queue';
import { createStorage } from '#libs/storage';
import { createApiApp } from '../apps/api/src/app.js';
import { runCommand } from '../apps/cli/src/run.js';
import { s3Env } from './s3.js';

const run = promisify(execFile);

export interface TestContext {
  config: AppConfig;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** Configuration for one test file: its own database, Redis prefix and data folder (or bucket). */
export async function testContext(overrides: Record<string, string> = {}): Promise<TestContext> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mr-test-'));
  const tag = randomBytes(6).toString('hex');
  const env: Record<string, string> = {
    APP_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `t${tag}`,
    APP_SECRET: randomBytes(32).toString('hex'),
    // The video engine (bundle + Chromium) only where a test asks for it; one bundle per machine.
    VIDEO_ENGINE: 'off',
    VIDEO_BUNDLE_DIR: join(tmpdir(), 'mr-test-video-bundle'),
    // The stock library (90 files to store and process) only where a test uses it.
    ASSET_STOCK: 'off',
    ...(process.env.TEST_STORAGE === 's3' ? s3Env() : {}),
  };
  let dropDb: (() => Promise<void>) | null = null;
  if (process.env.TEST_DB === 'postgres') {
    const admin = `${process.env.TEST_PG_URL}/postgres`;
    const name = `t_${tag}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`create database ${name}`);
    await client.end();
    env.DATABASE_URL = `${process.env.TEST_PG_URL}/${name}`;
    dropDb = async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    env.DATABASE_URL = `sqlite:${join(dataDir, 'app.sqlite')}`;
  }
  Object.assign(env, overrides);
  const config = loadConfig(env);
  return {
    config,
    env,
    async cleanup() {
      if (dropDb) await dropDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestApi extends TestContext {
  app: NestFastifyApplication;
  /** Runs a management CLI command against this context's database and Redis (`cli` below); returns its JSON and exit code. */
  cli(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }>;
  /** The same through the built CLI's process (`spawnCli`). */
  spawnCli(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startApi(overrides: Record<string, string> = {}, extraModules: Type[] = []): Promise<TestApi> {
  const ctx = await testContext(overrides);
  const app = await createApiApp(ctx.config, { extraModules });
  await app.getHttpAdapter().getInstance().ready();
  return {
    ...ctx,
    app,
    cli: (...args) => cli(ctx.env, ...args),
    spawnCli: (...args) => spawnCli(ctx.env, ...args),
    async close() {
      await app.close();
      await ctx.cleanup();
    },
  };
}

/**
 * A management CLI command against `env`'s database and Redis: the CLI's own code (apps/cli runCommand, which
 * main.ts prints: a services container of its own, PROCESS_ROLES.cli, closed after the command) run in this
 * process, its answer as printed (a JSON round trip) and its exit code. A spawned CLI costs a Node start, about
 * a second of CPU, and the suite runs hundreds of commands; `spawnCli` is the process itself, for the tests
 * whose subject it is (what it prints on stdout, that it exits, its connections).
 */
export async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  const { code, output } = await runCommand(args, { ...process.env, ...env });
  return { code, json: JSON.parse(JSON.stringify(output)) as Record<string, unknown> };
}

/** Spawns the built CLI (npm test builds first), exactly as an operator runs it. */
export async function spawnCli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  try {
    const { stdout } = await run(process.execPath, ['dist/apps/cli/src/main.js', ...args], { env: { ...process.env, ...env } });
    return { code: 0, json: JSON.parse(stdout) };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? 1, json: JSON.parse(e.stdout ?? '{}') };
  }
}

/**
 * The last sign-in code sent to `phone`, read with `otp:last` as an operator would, once the sends queued
 * by send-otp are done (the code is sent after the answer: decisions.md "Sessions and sign-in codes (issue 28)").
 */
export async function lastCode(api: TestApi, phone: string): Promise<string> {
  await api.app.get(AuthService).sendsSettled();
  return (await api.cli('otp:last', '--phone', phone)).json.code as string;
}

/**
 * A dashboard session (§5) of a user the CLI made: the sign-in code sent to `phone`, read back with
 * `otp:last` as an operator would, and exchanged for the session token.
 */
export async function signIn(api: TestApi, phone: string): Promise<string> {
  const sent = await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone } });
  if (sent.statusCode !== 200) throw new Error(`send-otp for ${phone} answered ${sent.statusCode}: ${sent.body}`);
  const otp = await lastCode(api, phone);
  const verified = await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { phone, otp } });
  if (verified.statusCode !== 200) throw new Error(`verify-otp for ${phone} answered ${verified.statusCode}: ${verified.body}`);
  return verified.json().data.token as string;
}

/** A user the CLI adds to a workspace (`user:create`) with `role`, signed in: the session token. */
export async function userSession(api: TestApi, workspaceId: string, phone: string, role: Role): Promise<string> {
  const created = await api.cli('user:create', '--phone', phone, '--workspace', workspaceId, '--role', role);
  if (created.code !== 0) throw new Error(`user:create ${phone} exited ${created.code}: ${JSON.stringify(created.json)}`);
  return signIn(api, phone);
}

/** A second API process on the same database and Redis (several API processes behind a balancer). */
export async function secondApi(ctx: TestContext, extraModules: Type[] = []): Promise<NestFastifyApplication> {
  const app = await createApiApp(ctx.config, { extraModules });
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/**
 * A stored file as a client downloads it from its URL: through the API's `/files/*` route (local
 * driver) or straight from the bucket with a plain GET (s3: the API serves no file).
 */
export async function fetchStored(api: { app: NestFastifyApplication; config: AppConfig }, url: string): Promise<{ status: number; body: Buffer; type: string | undefined }> {
  if (api.config.storage.driver === 'local') {
    const res = await api.app.inject({ method: 'GET', url: new URL(url).pathname });
    return { status: res.statusCode, body: res.rawPayload, type: res.headers['content-type'] as string | undefined };
  }
  const res = await fetch(url);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? undefined };
}

/** The storage key a URL of ours names (URLs are signed afresh on each read with s3: compare keys, not URLs). */
export function storedKey(config: AppConfig, url: string | null | undefined): string | undefined {
  return url ? createStorage(config).keyFromUrl(url) : undefined;
}

/** A multipart/form-data body, built by hand as clients send it. */
export function multipart(parts: { name: string; value?: string; file?: Buffer; filename?: string; type?: string }[]) {
  const boundary = `----mr${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = p.file !== undefined ? `form-data; name="${p.name}"; filename="${p.filename ?? 'file.bin'}"` : `form-data; name="${p.name}"`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.file !== undefined ? `Content-Type: ${p.type ?? 'application/octet-stream'}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head, 'utf8'), p.file ?? Buffer.from(p.value ?? '', 'utf8'), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Completion events of one of an application's queues (close them after use), ready to wait on. */
export async function queueEvents(queues: JobQueues, name: QueueName): Promise<QueueEvents> {
  const { connection, prefix } = queues.queue(name).opts;
  const events = new QueueEvents(name, { connection, prefix });
  await events.waitUntilReady();
  return events;
}

/** A loopback port free now (listened on and let go): for a process that must know its address before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
