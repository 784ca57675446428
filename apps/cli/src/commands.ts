import { readFile } from 'node:fs/promises';
import { DevMessage, ROLES, User, type AuthService, type Role } from '#libs/auth';
import { ApiError, type AppConfig, type KeyMode } from '#libs/core';
import type { CreditsService } from '#libs/credits';
import type { Orm } from '#libs/db';
import type { IntegrationsService } from '#libs/integrations';
import type { KeysService } from '#libs/keys';
import { channelAccountOf, type ChannelAccount, type ChannelFields, type MessagingService } from '#libs/messaging';
import type { GoogleConsent } from '#libs/suite';
import type { TemplatesService } from '#libs/templates';
import { planFor, type PlanCode, type WorkspacesService } from '#libs/workspaces';

/** What the commands use of the CLI's services (main.ts takes them from its Nest application context). */
export interface CommandContext {
  config: AppConfig;
  orm: Orm;
  workspaces: WorkspacesService;
  keys: KeysService;
  auth: AuthService;
  credits: CreditsService;
  templates: TemplatesService;
  integrations: IntegrationsService;
  googleConsent: GoogleConsent;
  messaging: MessagingService;
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

/** integration:connect's messaging-provider flags (docs/messaging.md "Connecting"). */
const MESSAGING_FLAGS = [
  'channel', 'phone-number-id', 'waba-id', 'display-number', 'app-secret', 'verify-token', 'account-sid', 'auth-token', 'from', 'messaging-service-sid',
  'smtp-host', 'smtp-port', 'smtp-secure', 'smtp-user', 'smtp-password',
] as const;

/** One messaging channel's account from integration:connect's flags; 422 naming every missing or wrong flag. */
function channelAccount(f: Flags): ChannelAccount {
  const kebab = (field: string) => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const fields: ChannelFields = {
    accessToken: f['access-token'], phoneNumberId: f['phone-number-id'], wabaId: f['waba-id'], displayNumber: f['display-number'], appSecret: f['app-secret'],
    verifyToken: f['verify-token'], accountSid: f['account-sid'], authToken: f['auth-token'], messagingServiceSid: f['messaging-service-sid'], from: f.from,
    smtpHost: f['smtp-host'], smtpPort: f['smtp-port'], smtpSecure: f['smtp-secure'], smtpUser: f['smtp-user'], smtpPassword: f['smtp-password'], baseUrl: f['base-url'],
  };
  return channelAccountOf(f.channel ?? '', fields, (field) => `--${kebab(field)}`);
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

function mode(value: string | undefined): KeyMode {
  if (value === undefined || value === 'live' || value === 'test') return value ?? 'live';
  throw new ApiError('INVALID_REQUEST', `--mode must be live or test (got "${value}")`);
}

function credits(value: string | undefined, flag: string): number {
  if (value === undefined) return 0;
  if (!/^\d{1,9}$/.test(value)) throw new ApiError('INVALID_REQUEST', `--${flag} must be a whole number of credits (got "${value}")`);
  return Number(value);
}

async function grant(ctx: CommandContext, workspaceId: string, plan: PlanCode, image: number, video: number): Promise<void> {
  if (image > 0) await ctx.credits.topup(workspaceId, plan, 'image', image);
  if (video > 0) await ctx.credits.topup(workspaceId, plan, 'video', video);
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
    flags: ['name!', 'plan', 'image-credits', 'video-credits'],
    async run(f, ctx) {
      const { workspaces, keys } = ctx;
      const image = credits(f['image-credits'], 'image-credits');
      const video = credits(f['video-credits'], 'video-credits');
      const { workspace, callbackSecret } = await workspaces.create({ name: f.name, plan: f.plan });
      const plan = planFor(workspace.plan, workspace.id).code;
      await ctx.credits.open(workspace.id, plan);
      await grant(ctx, workspace.id, plan, image, video);
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
  'credits:grant': {
    flags: ['workspace!', 'image', 'video'],
    async run(f, ctx) {
      const ws = await ctx.workspaces.get(f.workspace);
      const image = credits(f.image, 'image');
      const video = credits(f.video, 'video');
      if (image + video === 0) throw new ApiError('INVALID_REQUEST', 'Give --image and/or --video credits');
      const plan = planFor(ws.plan, ws.id).code;
      await grant(ctx, ws.id, plan, image, video);
      return ctx.credits.balance(ws.id, plan);
    },
  },
  'user:create': {
    flags: ['phone!', 'workspace!', 'role', 'name'],
    async run(f, { auth }) {
      const role = (f.role ?? 'member') as Role;
      if (!ROLES.includes(role)) throw new ApiError('INVALID_REQUEST', `--role must be ${ROLES.join(' or ')}`);
      const user = await auth.addUser(f.phone, f.workspace, role, f.name);
      return { userId: user.id };
    },
  },
  'user:remove': {
    // The owner's DELETE /organization/members/{userId} from the server: the member loses the workspace on their next request.
    flags: ['phone!', 'workspace!'],
    async run(f, { auth, orm }) {
      const phone = auth.phone(f.phone);
      const user = await orm.em.fork().findOne(User, { phone });
      if (!user) throw new ApiError('NOT_FOUND', `No user with the phone ${phone}`);
      await auth.removeMember(f.workspace, user.id);
      return { userId: user.id, workspaceId: f.workspace, removed: true };
    },
  },
  'otp:last': {
    flags: ['phone!'],
    async run(f, { auth, config, orm }) {
      if (config.env === 'production') throw new ApiError('INVALID_REQUEST', 'otp:last reads the development outbox; it is off in production');
      const phone = auth.phone(f.phone);
      const msg = await orm.em.fork().findOne(DevMessage, { recipient: phone }, { orderBy: { createdAt: 'desc', id: 'desc' } });
      const code = msg && /\b(\d{6})\b/.exec(msg.body)?.[1];
      if (!code) throw new ApiError('NOT_FOUND', `No sign-in code was sent to ${phone}`);
      return { phone, code };
    },
  },
  'template:publish': {
    flags: ['id!'],
    async run(f, { templates }) {
      const { template } = await templates.publishAny(f.id);
      return { id: template.id, status: template.status, version: template.version };
    },
  },
  'template:archive': {
    flags: ['id!'],
    async run(f, { templates }) {
      const { template } = await templates.archiveAny(f.id);
      return { id: template.id, status: template.status, version: template.version };
    },
  },
  'integration:authorize': {
    flags: ['workspace!', 'provider!', 'base-url', 'redirect-uri'],
    async run(f, { workspaces, googleConsent }) {
      const ws = await workspaces.get(f.workspace);
      if (f.provider !== 'workspace-suite') throw new ApiError('INVALID_REQUEST', `--provider: only workspace-suite connects by authorization code (got "${f.provider}")`);
      const consent = await googleConsent.authorize(ws.id, { baseUrl: f['base-url'] ?? null, redirectUri: f['redirect-uri'] ?? null });
      return { workspaceId: ws.id, provider: f.provider, ...consent, next: 'Open authorizationUrl, consent, then run integration:connect with the code and state of the redirect' };
    },
  },
  'integration:connect': {
    flags: ['workspace!', 'provider!', 'api-key', 'access-token', 'refresh-token', 'expires-at', 'engine', 'base-url', 'account-email', 'account-name', 'account', 'code', 'state', ...MESSAGING_FLAGS],
    async run(f, { workspaces, integrations, googleConsent, messaging }) {
      const ws = await workspaces.get(f.workspace);
      if (f.channel !== undefined || f.provider === 'messaging-provider') {
        // One channel account added to (or replaced in) the messaging-provider connection; the answer names the channels, never a secret.
        if (f.provider !== 'messaging-provider') throw new ApiError('INVALID_REQUEST', '--channel connects messaging-provider only');
        const row = await messaging.connectChannel(ws.id, channelAccount(f));
        const channels = Object.keys(integrations.credentialsOf(row).channels ?? {}).sort();
        return { ...integrations.view(row), channels };
      }
      if (f.engine !== undefined && f.engine !== 'local' && f.engine !== 'provider') throw new ApiError('INVALID_REQUEST', `--engine must be local or provider (got "${f.engine}")`);
      let credentials: { apiKey?: string; accessToken?: string; refreshToken?: string; expiresAt?: string } = {
        apiKey: f['api-key'], accessToken: f['access-token'], refreshToken: f['refresh-token'], expiresAt: f['expires-at'],
      };
      let baseUrl: string | null = f['base-url'] ?? null;
      if (f.code !== undefined || f.state !== undefined) {
        // The authorization-code flow: the code and state of integration:authorize's redirect.
        if (f.provider !== 'workspace-suite') throw new ApiError('INVALID_REQUEST', '--code and --state connect workspace-suite only');
        if (f.code === undefined || f.state === undefined) throw new ApiError('INVALID_REQUEST', '--code and --state go together');
        if (credentials.apiKey ?? credentials.accessToken ?? credentials.refreshToken ?? f['base-url']) throw new ApiError('INVALID_REQUEST', '--code replaces --api-key, --access-token, --refresh-token and --base-url (the base URL is the one integration:authorize used)');
        const granted = await googleConsent.exchange(ws.id, f.code, f.state);
        credentials = granted.credentials;
        baseUrl = granted.baseUrl;
      }
      const row = await integrations.connect(ws.id, {
        provider: f.provider,
        engine: f.engine as 'local' | 'provider' | undefined,
        credentials,
        baseUrl,
        accountEmail: f['account-email'] ?? null,
        accountName: f['account-name'] ?? f.account ?? null,
      });
      return integrations.view(row);
    },
  },
  'messaging:contacts:import': {
    flags: ['workspace!', 'file!'],
    async run(f, { workspaces, messaging }) {
      const ws = await workspaces.get(f.workspace);
      let entries: unknown;
      try {
        entries = JSON.parse(await readFile(f.file, 'utf8'));
      } catch (err) {
        throw new ApiError('INVALID_REQUEST', `--file must be a readable JSON array of {to?, email?, name?, tags?, optedIn?} (${(err as Error).message})`);
      }
      if (!Array.isArray(entries)) throw new ApiError('INVALID_REQUEST', '--file must hold a JSON array of {to?, email?, name?, tags?, optedIn?}');
      return { workspaceId: ws.id, ...(await messaging.importContacts(ws.id, entries as never[])) };
    },
  },
  'integration:disconnect': {
    flags: ['workspace!', 'provider!'],
    async run(f, { workspaces, integrations }) {
      const ws = await workspaces.get(f.workspace);
      if (!(await integrations.disconnect(ws.id, f.provider))) throw new ApiError('INTEGRATION_NOT_CONNECTED', `No ${f.provider} account is connected to ${ws.id}`);
      return { workspaceId: ws.id, provider: f.provider, disconnected: true };
    },
  },
  'key:revoke': {
    flags: ['id!'],
    async run(f, { keys }) {
      const key = await keys.revokeAny(f.id);
      return { id: key.id, revoked: true };
    },
  },
};
