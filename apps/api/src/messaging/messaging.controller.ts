import { Body, Controller, Get, Headers, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ok, paged, pagination, parseListQuery } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { CampaignsService, DEFAULT_MESSAGING_LIMIT, MessagingService, RECIPIENT_LIST } from '#libs/messaging';
import { ApiEnvelope, ApiErrors, ApiListQuery, Integration, Scopes } from '../http/decorators.js';
import { Connection, Principal, type KeyPrincipal } from '../http/principal.js';
import {
  CampaignDto, CampaignRecipientDto, ChannelDto, CreateCampaignDto, ListChannelsQueryDto, ListContactsQueryDto, ListTemplatesQueryDto, MessageDto, MessagingAllowanceDto, MessagingContactsPageDto,
  MessagingTemplateDto, SendMessageDto,
} from './messaging.dto.js';

const PROVIDER_ERRORS = ['PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR'] as const;

/** §4.5 the messaging-provider rows (docs/messaging.md): WhatsApp Cloud API, Twilio and SMTP channels. */
@ApiTags('messaging')
@Controller('v1/integrations/messaging-provider')
export class MessagingController {
  constructor(private readonly messaging: MessagingService, private readonly campaigns: CampaignsService) {}

  @Get('channels')
  @Scopes('integrations:read')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'The channels of the messaging-provider connection and what each can send' })
  @ApiEnvelope(ChannelDto, { isArray: true, paged: false })
  @ApiErrors('VALIDATION_FAILED')
  channels(@Connection() use: UsableConnection, @Query() q: ListChannelsQueryDto) {
    return ok(this.messaging.channels(use, { channel: q.channel, status: q.status ?? 'connected' }));
  }

  @Get('templates')
  @Scopes('integrations:read')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'The WhatsApp Business Account\'s message templates (APPROVED by default)' })
  @ApiEnvelope(MessagingTemplateDto, { isArray: true, paged: false })
  @ApiErrors('VALIDATION_FAILED', 'MESSAGING_CHANNEL_NOT_CONNECTED', ...PROVIDER_ERRORS)
  async templates(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Query() q: ListTemplatesQueryDto) {
    return ok(await this.messaging.templates(p.workspaceId, use, { ...q, status: q.status ?? 'APPROVED', limit: q.limit ?? DEFAULT_MESSAGING_LIMIT }));
  }

  @Get('contacts')
  @Scopes('integrations:read')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'The workspace\'s messaging contacts: every recipient messaged, and those imported (messaging:contacts:import)' })
  @ApiEnvelope(MessagingContactsPageDto)
  @ApiErrors('VALIDATION_FAILED')
  async contacts(@Principal() p: KeyPrincipal, @Query() q: ListContactsQueryDto) {
    return ok(await this.messaging.contacts(p.workspaceId, { tag: q.tag, search: q.search, limit: q.limit ?? DEFAULT_MESSAGING_LIMIT, page: q.page ?? 1 }));
  }

  @Get('usage')
  @Scopes('integrations:read')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'Messages sent this month against the plan\'s allowance, in the caller\'s mode (test messages have their own allowance of the same size)' })
  @ApiEnvelope(MessagingAllowanceDto)
  async usage(@Principal() p: KeyPrincipal) {
    return ok(await this.messaging.usage(p.workspaceId, p.plan, p.mode));
  }

  @Post('messages')
  @Scopes('integrations:write')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'Send one message (a template with a render as its header, text, media or interactive); 201 with the provider\'s message id, 200 with the stored message when the Idempotency-Key was used before' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters; a retry with it returns the message sent the first time instead of sending again' })
  @ApiEnvelope(MessageDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'INVALID_REQUEST', 'RENDER_NOT_FOUND', 'MESSAGE_REJECTED', 'MESSAGING_CHANNEL_NOT_CONNECTED', 'LIMIT_MESSAGES', ...PROVIDER_ERRORS)
  async send(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: SendMessageDto, @Headers('idempotency-key') key: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const { message, replayed } = await this.messaging.send(p.workspaceId, p.plan, p.mode, use, body, key ?? null);
    if (replayed) reply.status(200);
    return ok(message, replayed ? `Already sent as ${message.id} (Idempotency-Key); not sent again` : `Sent as ${message.id}`);
  }

  @Post('campaigns')
  @Scopes('integrations:write')
  @Integration('messaging-provider')
  @ApiOperation({ summary: 'Broadcast a template to up to 5,000 recipients at rateLimitPerSecond; 202 with the campaign (every recipient checked first), 200 with the stored one for a used Idempotency-Key' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters; a retry with it returns the campaign made the first time instead of broadcasting again' })
  @ApiEnvelope(CampaignDto, { status: 202 })
  @ApiErrors('VALIDATION_FAILED', 'INVALID_REQUEST', 'RENDER_NOT_FOUND', 'MESSAGING_CHANNEL_NOT_CONNECTED', 'LIMIT_MESSAGES', ...PROVIDER_ERRORS)
  async broadcast(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: CreateCampaignDto, @Headers('idempotency-key') key: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const { campaign, replayed } = await this.campaigns.create(p.workspaceId, p.plan, p.mode, use, body, key ?? null);
    reply.status(replayed ? 200 : 202);
    return ok(campaign, replayed ? `Already created as ${campaign.id} (Idempotency-Key); not broadcast again` : `Campaign ${campaign.id}: ${campaign.total} recipients queued`);
  }

  @Get('campaigns/:id')
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'A campaign and its progress (recipients by status)' })
  @ApiEnvelope(CampaignDto)
  @ApiErrors('CAMPAIGN_NOT_FOUND')
  async campaign(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(await this.campaigns.get(p.workspaceId, id));
  }

  @Get('campaigns/:id/recipients')
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'A campaign\'s recipients and how each send went (filter by status)' })
  @ApiListQuery(RECIPIENT_LIST)
  @ApiEnvelope(CampaignRecipientDto, { isArray: true })
  @ApiErrors('CAMPAIGN_NOT_FOUND', 'INVALID_LIST_QUERY')
  async recipients(@Principal() p: KeyPrincipal, @Param('id') id: string, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(RECIPIENT_LIST, raw);
    const { rows, total } = await this.campaigns.recipients(p.workspaceId, id, q);
    return paged(rows, pagination(q, total));
  }
}
