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

async function run(argv: readonly string[], env: Record<string, string | undefined>): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    throw new ApiError('INVALID_REQUEST', `Unknown command "${name ?? ''}". Commands: ${Object.keys(COMMANDS).join(', ')}`);
  }
  const flags = parseArgs(rest, command.flags);
  const app = await createServicesContext(loadConfig(env), PROCESS_ROLES.cli);
  try {
    return await command.run(flags, commandContext(app));
  } finally {
    await app.close();
  }
}

/**
 * One command from its arguments and environment, in a services container of its own (PROCESS_ROLES.cli)
 * closed after it: the object main.ts prints on stdout and its exit code, 0, or 1 with `{ error: { code, message } }`.
 * The e2e tests call it in their own process, sparing a Node start (about a second of CPU) per command.
 */
export async function runCommand(argv: readonly string[], env: Record<string, string | undefined> = process.env): Promise<{ code: 0 | 1; output: unknown }> {
  try {
    return { code: 0, output: await run(argv, env) };
  } catch (err) {
    const code = err instanceof ApiError ? err.code : err instanceof ConfigError ? 'CONFIG_ERROR' : 'INTERNAL_ERROR';
    return { code: 1, output: { error: { code, message: (err as Error).message } } };
  }
}
