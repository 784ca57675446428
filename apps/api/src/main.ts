import 'reflect-metadata';
import { ConfigError, loadConfig } from '#libs/core';
import { createApiApp } from './app.js';

try {
  const config = loadConfig();
  const app = await createApiApp(config);
  app.enableShutdownHooks();
  await app.listen({ port: config.port, host: config.host });
  console.log(`API listening on http://${config.host}:${config.port}/${config.prefix} (${config.env}, ${config.database.kind})`);
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(78);
  }
  throw err;
}
