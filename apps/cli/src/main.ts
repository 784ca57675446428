/**
 * The management CLI (decisions.md): `npm run -s cli -- <command> [--flags]`.
 * Prints exactly one JSON object on stdout and exits 0, or `{ "error": { code, message } }` and exits 1.
 */
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { APP_CONFIG, createServicesContext, ORM, PROCESS_ROLES } from '#libs/app';
import { AuthService } from '#libs/auth';
import { ApiError, ConfigError, loadConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { IntegrationsService } from '#libs/integrations';
import { KeysService } from '#libs/keys';
import { MessagingService } from '#libs/messaging';
import { GoogleConsent } from '#libs/suite';
import { TemplatesService } from '#libs/templates';
import { WorkspacesService } from '#libs/workspaces';
import { COMMANDS, parseArgs, type CommandContext } from './commands.js';

/** The services the commands use, from the CLI's container. */
function commandContext(app: INestApplicationContext): CommandContext {
  return {
    config: app.get(APP_CONFIG), orm: app.get(ORM), workspaces: app.get(WorkspacesService), keys: app.get(KeysService), auth: app.get(AuthService),
    credits: app.get(CreditsService), templates: app.get(TemplatesService), integrations: app.get(IntegrationsService),
    googleConsent: app.get(GoogleConsent), messaging: app.get(MessagingService),
  };
}

async function run(argv: string[]): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    throw new ApiError('INVALID_REQUEST', `Unknown command "${name ?? ''}". Commands: ${Object.keys(COMMANDS).join(', ')}`);
  }
  const flags = parseArgs(rest, command.flags);
  const app = await createServicesContext(loadConfig(), PROCESS_ROLES.cli);
  try {
    return await command.run(flags, commandContext(app));
  } finally {
    await app.close();
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
