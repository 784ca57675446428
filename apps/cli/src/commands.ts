import { ApiError, type AppConfig, type KeyMode } from '#libs/core';
import type { KeysService } from '#libs/keys';
import type { WorkspacesService } from '#libs/workspaces';

export interface CommandContext {
  config: AppConfig;
  workspaces: WorkspacesService;
  keys: KeysService;
}

type Flags = Record<string, string>;

interface Command {
  /** Allowed flags; `!` marks a required one. */
  flags: readonly string[];
  run(flags: Flags, ctx: CommandContext): Promise<unknown>;
}

/** `--name value` or `--name=value`; unknown or missing flags are errors naming the flag. */
export function parseArgs(args: readonly string[], spec: readonly string[]): Flags {
  const allowed = new Map(spec.map((f) => [f.replace(/!$/, ''), f.endsWith('!')]));
  const out: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(args[i]);
    if (!m) throw new ApiError('INVALID_REQUEST', `Unexpected argument "${args[i]}"`);
    const [, name, inline] = m;
    if (!allowed.has(name)) {
      throw new ApiError('INVALID_REQUEST', `Unknown flag --${name}; allowed: ${[...allowed.keys()].map((f) => `--${f}`).join(', ') || 'none'}`);
    }
    const value = inline ?? args[++i];
    if (value === undefined) throw new ApiError('INVALID_REQUEST', `--${name} needs a value`);
    out[name] = value;
  }
  for (const [name, required] of allowed) {
    if (required && out[name] === undefined) throw new ApiError('INVALID_REQUEST', `--${name} is required`);
  }
  return out;
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

function mode(value: string | undefined): KeyMode {
  if (value === undefined || value === 'live' || value === 'test') return value ?? 'live';
  throw new ApiError('INVALID_REQUEST', `--mode must be live or test (got "${value}")`);
}

function date(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new ApiError('INVALID_REQUEST', `--expires must be an ISO 8601 date (got "${value}")`);
  }
  return d;
}

export const COMMANDS: Record<string, Command> = {
  'workspace:create': {
    flags: ['name!', 'plan'],
    async run(f, { workspaces, keys }) {
      const { workspace, callbackSecret } = await workspaces.create({ name: f.name, plan: f.plan });
      const live = await keys.create({ workspaceId: workspace.id, mode: 'live', name: 'default live key' });
      const test = await keys.create({ workspaceId: workspace.id, mode: 'test', name: 'default test key' });
      return { workspaceId: workspace.id, liveKey: live.key, testKey: test.key, callbackSecret };
    },
  },
  'workspace:suspend': {
    flags: ['workspace!'],
    async run(f, { workspaces }) {
      const ws = await workspaces.setSuspended(f.workspace, true);
      return { workspaceId: ws.id, suspended: true };
    },
  },
  'workspace:unsuspend': {
    flags: ['workspace!'],
    async run(f, { workspaces }) {
      const ws = await workspaces.setSuspended(f.workspace, false);
      return { workspaceId: ws.id, suspended: false };
    },
  },
  'workspace:plan': {
    flags: ['workspace!', 'plan!'],
    async run(f, { workspaces }) {
      const ws = await workspaces.setPlan(f.workspace, f.plan);
      return { workspaceId: ws.id, plan: ws.plan };
    },
  },
  'key:create': {
    flags: ['workspace!', 'mode', 'scopes', 'ip', 'expires', 'name'],
    async run(f, { keys }) {
      const created = await keys.create({
        workspaceId: f.workspace,
        mode: mode(f.mode),
        scopes: list(f.scopes),
        ipAllowlist: list(f.ip),
        expiresAt: date(f.expires),
        name: f.name ?? null,
      });
      return { id: created.id, key: created.key };
    },
  },
  'key:revoke': {
    flags: ['id!'],
    async run(f, { keys }) {
      const key = await keys.revoke(f.id);
      return { id: key.id, revoked: true };
    },
  },
};
