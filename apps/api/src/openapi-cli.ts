/** `npm run openapi`: regenerates openapi.json in the repository root (the tests fail when it is stale). */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { loadConfig } from '#libs/core';
import { createApiApp } from './app.js';
import { buildOpenApiDocument } from './openapi.js';

const config = loadConfig({
  ...process.env,
  DATABASE_URL: 'sqlite::memory:',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:1',
  APP_SECRET: '0'.repeat(64),
  API_PREFIX: 'api',
  LOG_LEVEL: 'silent',
  // Nothing to seed: the document is built from the routes alone.
  ASSET_STOCK: 'off',
});
const app = await createApiApp(config);
const text = `${JSON.stringify(buildOpenApiDocument(app, config), null, 2)}\n`;
if (process.argv.includes('--write')) writeFileSync('openapi.json', text);
else process.stdout.write(text);
// No Redis runs here (REDIS_URL points nowhere unless given): closing the queues' connections can wait
// on it forever, and the document is written already.
await Promise.race([app.close(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
process.exit(0);
