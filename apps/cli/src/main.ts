/**
 * The management CLI (decisions.md): `npm run -s cli -- <command> [--flags]`.
 * Prints exactly one JSON object on stdout and exits 0, or `{ "error": { code, message } }` and exits 1.
 */
import 'reflect-metadata';
import { openAppDatabase } from '#libs/app';
import { AuthService, OutboxSmsSender } from '#libs/auth';
import { ApiError, ConfigError, loadConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { KeysService } from '#libs/keys';
import { createRedis, RedisKeys } from '#libs/redis';
import { createStorage } from '#libs/storage';
import { httpReachability, storedOrHttp, TemplatesService } from '#libs/templates';
import { WorkspacesService } from '#libs/workspaces';
import { COMMANDS, parseArgs, type CommandContext } from './commands.js';

async function run(argv: string[]): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    throw new ApiError('INVALID_REQUEST', `Unknown command "${name ?? ''}". Commands: ${Object.keys(COMMANDS).join(', ')}`);
  }
  const flags = parseArgs(rest, command.flags);
  const config = loadConfig();
  const orm = await openAppDatabase(config.database);
  const redis = createRedis(config, 'cli', { maxRetriesPerRequest: 1 });
  const redisKeys = new RedisKeys(config.redisPrefix);
  const ctx: CommandContext = {
    config,
    workspaces: new WorkspacesService(orm, redis, redisKeys, config),
    keys: new KeysService(orm, redis, redisKeys, config),
    auth: new AuthService(orm, redis, redisKeys, config, new OutboxSmsSender(orm)),
    credits: new CreditsService(orm, { lowThreshold: config.creditsLowThreshold }),
    templates: new TemplatesService(orm, { policy: config.env, reachability: storedOrHttp(createStorage(config), httpReachability(config.env)) }),
    orm,
  };
  try {
    return await command.run(flags, ctx);
  } finally {
    await orm.close(true);
    redis.disconnect();
  }
}

try {
  const result = await run(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (err) {
  const code = err instanceof ApiError ? err.code : err instanceof ConfigError ? 'CONFIG_ERROR' : 'INTERNAL_ERROR';
  process.stdout.write(`${JSON.stringify({ error: { code, message: (err as Error).message } })}\n`);
  process.exitCode = 1;
}
