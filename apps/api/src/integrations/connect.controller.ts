import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, checkProvider, EngineCensus, KEYED_PROVIDERS, type KeyedProvider } from '#libs/app';
import { ApiError, ok, validationFailed, type AppConfig } from '#libs/core';
import { INTEGRATION_PROVIDERS, IntegrationsService, isIntegrationProvider, type IntegrationConnection, type IntegrationProvider } from '#libs/integrations';
import { channelAccountOf, CONNECTABLE_CHANNELS, MessagingService, type ConnectableChannel } from '#libs/messaging';
import { DriveService, GoogleConsent } from '#libs/suite';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';
import { AuthorizeSuiteDto, ChannelDisconnectedDto, CheckedDto, ConnectChannelDto, ConnectionDto, ConnectKeyDto, ConsentDto, DisconnectedDto, FinishConsentDto, ProviderStateDto } from './integrations.dto.js';

/** The provider of a path, or 404 naming the ones there are. */
function providerOf(value: string): IntegrationProvider {
  if (!isIntegrationProvider(value)) throw new ApiError('NOT_FOUND', `No provider "${value}": ${INTEGRATION_PROVIDERS.join(', ')}`);
  return value;
}

/** The messaging channel of a path, or 404 naming the ones this deployment connects. */
function channelOf(value: string): ConnectableChannel {
  if (!(CONNECTABLE_CHANNELS as readonly string[]).includes(value)) throw new ApiError('NOT_FOUND', `No channel "${value}" to connect: ${CONNECTABLE_CHANNELS.join(', ')}`);
  return value as ConnectableChannel;
}

/**
 * Connecting accounts from the dashboard (issue 29; the CLI's integration:authorize, :connect and
 * :disconnect for an owner's session): the workspace suite by authorization code + PKCE through the
 * provider's consent page and back to the dashboard's /integrations/callback, the offline engines in
 * one click where this machine has them, and Disconnect. decisions.md "Dashboard (issue 29): the team".
 */
@ApiTags('organization')
@Controller('organization/integrations')
export class ConnectController {
  constructor(
    private readonly integrations: IntegrationsService,
    private readonly consent: GoogleConsent,
    private readonly drive: DriveService,
    private readonly messaging: MessagingService,
    private readonly census: EngineCensus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'Every provider: its connection (credentials never shown), its messaging channels, and whether the workers run its offline engine' })
  @ApiEnvelope(ProviderStateDto, { isArray: true, paged: false })
  async providers(@SessionUser() s: SessionPrincipal) {
    const rows = new Map((await this.integrations.list(s.workspaceId)).map((r) => [r.provider, r]));
    const engines = await this.census.states(INTEGRATION_PROVIDERS);
    return ok(INTEGRATION_PROVIDERS.map((provider) => this.stateOf(provider, rows.get(provider), engines.get(provider)!)));
  }

  /** A provider's line of the list: its connection, its channels (messaging-provider), its offline engine. */
  private stateOf(provider: IntegrationProvider, row: IntegrationConnection | undefined, local: { state: string; missing: string[] }) {
    const channels = row && provider === 'messaging-provider' ? this.messaging.connectedChannels(row) : [];
    return { provider, connection: row ? this.integrations.view(row) : null, localEngine: local.state, missingPrograms: local.missing, channels };
  }

  @Post('workspace-suite/authorize')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Start connecting the workspace suite: the consent URL (authorization code + PKCE S256; the verifier kept sealed for 10 minutes under a one-time state), coming back to the dashboard\'s /integrations/callback' })
  @ApiEnvelope(ConsentDto)
  @ApiErrors('VALIDATION_FAILED')
  async authorize(@SessionUser() s: SessionPrincipal, @Body() body: AuthorizeSuiteDto) {
    // A deployment without an OAuth client cannot connect the suite: said on the provider (not a 5xx: nothing failed).
    if (!this.config.google.clientId || !this.config.google.clientSecret) {
      throw validationFailed({ provider: ['this deployment has no Google OAuth client (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET): the workspace suite cannot be connected here'] });
    }
    const redirectUri = `${this.config.publicUrl}/integrations/callback`;
    // The OAuth client's secret goes to the base URL's token endpoint: only one the operator listed.
    const baseUrl = body.baseUrl?.replace(/\/+$/, '') ?? null;
    if (baseUrl !== null && !this.config.google.allowedBaseUrls.includes(baseUrl)) {
      throw validationFailed({ baseUrl: ['is not one of the authorization servers this deployment allows (GOOGLE_BASE_URLS)'] });
    }
    return ok(await this.consent.authorize(s.workspaceId, { baseUrl, redirectUri }));
  }

  @Post('workspace-suite/connect')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Finish connecting the workspace suite with the code and state the consent page sent back (the state is spent, once, by this workspace); the account\'s email is read from the provider' })
  @ApiEnvelope(ConnectionDto)
  @ApiErrors('VALIDATION_FAILED', 'PROVIDER_ERROR', 'PROVIDER_UNAVAILABLE')
  async finish(@SessionUser() s: SessionPrincipal, @Body() body: FinishConsentDto) {
    const granted = await this.consent.exchange(s.workspaceId, body.code, body.state);
    const row = await this.integrations.connect(s.workspaceId, { provider: 'workspace-suite', credentials: granted.credentials, baseUrl: granted.baseUrl });
    // Who it acts as: best effort (the grant holds even if this read fails; the dashboard then shows no email).
    try {
      const account = await this.drive.about(this.integrations.usable(row, 'workspace-suite'));
      await this.integrations.setAccount(s.workspaceId, 'workspace-suite', account);
      row.accountEmail = account.email;
      row.accountName = account.name;
    } catch (err) {
      // Shown without an email when the provider would not say; anything else is ours and answered as such.
      if (!(err instanceof ApiError)) throw err;
    }
    return ok(this.integrations.view(row), 'Connected');
  }

  @Post(':provider/local')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Connect a speech provider or voice-provider to the offline engine of this deployment (pocketsphinx, espeak-ng): 422 when no worker has it' })
  @ApiEnvelope(ConnectionDto)
  @ApiErrors('NOT_FOUND', 'VALIDATION_FAILED')
  async local(@SessionUser() s: SessionPrincipal, @Param('provider') name: string) {
    const provider = providerOf(name);
    const local = await this.census.state(provider);
    if (local.state === 'none') throw validationFailed({ provider: [`${provider} has no offline engine`] });
    if (local.state === 'missing') throw validationFailed({ provider: [`${local.source === 'workers' ? 'no worker has' : 'this machine lacks'} ${local.missing.join(', ')} (the offline engine's programs)`] });
    const row = await this.integrations.connect(s.workspaceId, { provider, engine: 'local', credentials: {}, baseUrl: null, accountName: 'Offline engine' });
    return ok(this.integrations.view(row), 'Connected');
  }

  @Post(':provider/key')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Connect voice-provider or a speech provider with an API key: checked against the provider first (a refused key is 422 on apiKey with what the provider answered; nothing is saved), then saved sealed' })
  @ApiEnvelope(ConnectionDto)
  @ApiErrors('NOT_FOUND', 'VALIDATION_FAILED')
  async key(@SessionUser() s: SessionPrincipal, @Param('provider') name: string, @Body() body: ConnectKeyDto) {
    const provider = providerOf(name);
    if (!(KEYED_PROVIDERS as readonly string[]).includes(provider)) throw validationFailed({ provider: [`${provider} does not connect with an API key here (${KEYED_PROVIDERS.join(', ')} do)`] });
    const baseUrl = body.baseUrl?.replace(/\/+$/, '') ?? null;
    await checkProvider(this.config, provider as KeyedProvider, { apiKey: body.apiKey }, baseUrl);
    const row = await this.integrations.connect(s.workspaceId, { provider, credentials: { apiKey: body.apiKey }, baseUrl, accountName: `API key …${body.apiKey.slice(-4)}` });
    return ok(this.integrations.view(row), 'Connected');
  }

  @Post('messaging-provider/channels/:channel')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Connect (or replace) one messaging channel: WhatsApp Cloud API (primary_chat), Twilio (sms) or an SMTP relay (email). Checked against the provider first (a read that sends nothing; a failed check is 422 on the field it is about, with what the provider answered; nothing is saved), then saved sealed beside the other channels' })
  @ApiEnvelope(ProviderStateDto)
  @ApiErrors('NOT_FOUND', 'VALIDATION_FAILED')
  async connectChannel(@SessionUser() s: SessionPrincipal, @Param('channel') name: string, @Body() body: ConnectChannelDto) {
    const account = await this.messaging.checkChannel(channelAccountOf(channelOf(name), body));
    const row = await this.messaging.connectChannel(s.workspaceId, account);
    return ok(this.stateOf('messaging-provider', row, { state: 'none', missing: [] }), 'Connected');
  }

  @Post('messaging-provider/channels/:channel/test')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Test one connected messaging channel with the check its form made (nothing is sent); what the provider answered when it refused' })
  @ApiEnvelope(CheckedDto)
  @ApiErrors('NOT_FOUND', 'MESSAGING_CHANNEL_NOT_CONNECTED', 'VALIDATION_FAILED')
  async testChannel(@SessionUser() s: SessionPrincipal, @Param('channel') name: string) {
    const channel = channelOf(name);
    await this.messaging.checkChannel(await this.messaging.channelAccount(s.workspaceId, channel));
    return ok({ provider: 'messaging-provider', message: `The provider accepted the ${channel} account` });
  }

  @Delete('messaging-provider/channels/:channel')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Disconnect one messaging channel: its account is deleted, the other channels stay (the connection goes with its last channel)' })
  @ApiEnvelope(ChannelDisconnectedDto)
  @ApiErrors('NOT_FOUND', 'MESSAGING_CHANNEL_NOT_CONNECTED')
  async disconnectChannel(@SessionUser() s: SessionPrincipal, @Param('channel') name: string) {
    const channel = channelOf(name);
    if (!(await this.messaging.disconnectChannel(s.workspaceId, channel))) throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', `The messaging-provider connection has no ${channel} account`);
    return ok({ channel, disconnected: true }, 'Disconnected');
  }

  @Post(':provider/test')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Test a connection with one cheap call to its provider (the offline engine: a worker reports its programs, or this machine has them when none reported; a messaging connection: each channel checked); what the provider answered when it refused' })
  @ApiEnvelope(CheckedDto)
  @ApiErrors('NOT_FOUND', 'INTEGRATION_NOT_CONNECTED', 'VALIDATION_FAILED', 'PROVIDER_ERROR', 'PROVIDER_UNAVAILABLE')
  async test(@SessionUser() s: SessionPrincipal, @Param('provider') name: string) {
    const provider = providerOf(name);
    const row = await this.integrations.find(s.workspaceId, provider);
    if (!row) throw new ApiError('INTEGRATION_NOT_CONNECTED', `No ${provider} account is connected`);
    if (row.engine === 'local') {
      const local = await this.census.state(provider);
      const where = local.source === 'workers' ? ['on any worker', 'on the workers'] : ['on this machine', 'on this machine'];
      if (local.state !== 'available') throw new ApiError('PROVIDER_UNAVAILABLE', `The offline engine of ${provider} is not installed ${where[0]}${local.missing.length ? `: ${local.missing.join(', ')} missing` : ''}`);
      return ok({ provider, message: `The offline engine is installed ${where[1]}` });
    }
    if (provider === 'workspace-suite') {
      const account = await this.drive.about(this.integrations.usable(row, provider));
      return ok({ provider, message: `Connected as ${account.email ?? account.name ?? 'the account that consented'}` });
    }
    if (provider === 'messaging-provider') {
      const accounts = this.messaging.accountsOf(row);
      const channels = CONNECTABLE_CHANNELS.filter((c) => accounts[c]);
      if (!channels.length) throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', 'The messaging-provider connection has no channel account to test');
      for (const channel of channels) await this.messaging.checkChannel(accounts[channel]!);
      return ok({ provider, message: `The provider accepted ${channels.length === 1 ? 'the account' : 'every account'}: ${channels.join(', ')}` });
    }
    if (!(KEYED_PROVIDERS as readonly string[]).includes(provider)) throw validationFailed({ provider: [`${provider} has no test here`] });
    await checkProvider(this.config, provider as KeyedProvider, this.integrations.credentialsOf(row), row.baseUrl ?? null);
    return ok({ provider, message: 'The provider accepted the key' });
  }

  @Delete(':provider')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Disconnect a provider: its credentials are deleted; its routes answer 409 INTEGRATION_NOT_CONNECTED' })
  @ApiEnvelope(DisconnectedDto)
  @ApiErrors('NOT_FOUND', 'INTEGRATION_NOT_CONNECTED')
  async disconnect(@SessionUser() s: SessionPrincipal, @Param('provider') name: string) {
    const provider = providerOf(name);
    if (!(await this.integrations.disconnect(s.workspaceId, provider))) throw new ApiError('INTEGRATION_NOT_CONNECTED', `No ${provider} account is connected`);
    return ok({ provider, disconnected: true }, 'Disconnected');
  }
}
