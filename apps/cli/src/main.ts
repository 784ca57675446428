/**
 * The management CLI (decisions.md): `npm run -s cli -- <command> [--flags]`.
 * Prints exactly one JSON object on stdout and exits 0, or `{ "error": { code, message } }` and exits 1.
 */
import 'reflect-metadata';
import { AppServices, PROCESS_ROLES } from '#libs/app';
import { ApiError, ConfigError, loadConfig } from '#libs/core';
import { COMMANDS, parseArgs } from './commands.js';

async function run(argv: string[]): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    throw new ApiError('INVALID_REQUEST', `Unknown command "${name ?? ''}". Commands: ${Object.keys(COMMANDS).join(', ')}`);
  }
  const flags = parseArgs(rest, command.flags);
  const services = await AppServices.open(loadConfig(), PROCESS_ROLES.cli);
  try {
    return await command.run(flags, services);
  } finally {
    await services.close();
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
