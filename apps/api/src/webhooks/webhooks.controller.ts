import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { KeyMode } from '#libs/core';
import { ApiEnvelope, ApiErrors, ApiListQuery, Scopes, Session } from '../http/decorators.js';
import { CallerMode, Principal, SessionUser, type KeyPrincipal, type SessionPrincipal } from '../http/principal.js';
import { CreatedWebhookEndpointDto, CreateWebhookDto, DeliveryDto, RedeliveryDto, UpdateWebhookDto, WebhookEndpointDto, WebhookTestResultDto } from './webhooks.dto.js';
import { DELIVERY_LIST, WEBHOOK_LIST, WebhookHandlers } from './webhooks.handlers.js';

const NOT_FOUND = 'WEBHOOK_NOT_FOUND' as const;
/** A test caller on a live endpoint or delivery (issue 28). */
const MODE = 'LIVE_MODE_REQUIRED' as const;

/** §4.6: webhook endpoints with an API key. */
@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly h: WebhookHandlers) {}

  @Get()
  @Scopes('webhooks:read')
  @ApiOperation({ summary: 'List webhook endpoints' })
  @ApiListQuery(WEBHOOK_LIST)
  @ApiEnvelope(WebhookEndpointDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  list(@Principal() p: KeyPrincipal, @Query() q: Record<string, unknown>) {
    return this.h.list(p.workspaceId, q);
  }

  @Post()
  @Scopes('webhooks:write')
  @ApiOperation({ summary: 'Register an endpoint; the signing secret is in this answer only (data.secret)' })
  @ApiEnvelope(CreatedWebhookEndpointDto, { status: 201, description: 'Created; data.secret is shown this once' })
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED')
  create(@Principal() p: KeyPrincipal, @Body() body: CreateWebhookDto) {
    return this.h.create(p.workspaceId, p.mode, body, true);
  }

  @Get(':id')
  @Scopes('webhooks:read')
  @ApiOperation({ summary: 'Retrieve an endpoint' })
  @ApiEnvelope(WebhookEndpointDto)
  @ApiErrors(NOT_FOUND)
  get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return this.h.get(p.workspaceId, id);
  }

  @Patch(':id')
  @Scopes('webhooks:write')
  @ApiOperation({ summary: 'Update an endpoint (isActive true re-enables it and clears the failure streak)' })
  @ApiEnvelope(WebhookEndpointDto)
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', NOT_FOUND, MODE)
  update(@Principal() p: KeyPrincipal, @Param('id') id: string, @Body() body: UpdateWebhookDto) {
    return this.h.update(p.workspaceId, p.mode, id, body);
  }

  @Delete(':id')
  @Scopes('webhooks:write')
  @ApiOperation({ summary: 'Delete an endpoint; deliveries stop' })
  @ApiEnvelope(null, { description: 'Deleted' })
  @ApiErrors(NOT_FOUND, MODE)
  remove(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return this.h.remove(p.workspaceId, p.mode, id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Scopes('webhooks:write')
  @ApiOperation({ summary: 'Send a test render.completed event through the real path' })
  @ApiEnvelope(WebhookTestResultDto, { description: 'The test delivery was made; data.ok says whether the endpoint took it' })
  @ApiErrors(NOT_FOUND, MODE, 'LIMIT_WEBHOOKDELIVERIES')
  test(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return this.h.test(p.workspaceId, p.mode, id);
  }

  @Get(':id/deliveries')
  @Scopes('webhooks:read')
  @ApiOperation({ summary: 'Delivery log of an endpoint, newest first (cursor list)' })
  @ApiListQuery(DELIVERY_LIST)
  @ApiEnvelope(DeliveryDto, { isArray: true, paged: 'cursor' })
  @ApiErrors(NOT_FOUND, 'INVALID_LIST_QUERY')
  deliveries(@Principal() p: KeyPrincipal, @Param('id') id: string, @Query() q: Record<string, unknown>) {
    return this.h.deliveries(p.workspaceId, id, q);
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @Scopes('webhooks:write')
  @ApiOperation({ summary: 'Deliver a past event again' })
  @ApiEnvelope(RedeliveryDto, { status: 202, description: 'Redelivery queued' })
  @ApiErrors(NOT_FOUND, 'DELIVERY_NOT_FOUND', MODE, 'LIMIT_WEBHOOKDELIVERIES')
  redeliver(@Principal() p: KeyPrincipal, @Param('id') id: string, @Param('deliveryId') deliveryId: string) {
    return this.h.redeliver(p.workspaceId, p.mode, id, deliveryId);
  }
}

/**
 * §4.7: the same endpoints for the dashboard (session + X-Service-Org). Changing them is an owner's, as
 * `webhooks:write` on /v1 (ROLE_SCOPES: where the workspace's data is sent); members list them. The
 * caller's mode is the session's X-Service-Mode, as on /v1 (live by default).
 */
@ApiTags('organization')
@Controller('organization/webhooks')
export class OrganizationWebhooksController {
  constructor(private readonly h: WebhookHandlers) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'List webhook endpoints' })
  @ApiListQuery(WEBHOOK_LIST)
  @ApiEnvelope(WebhookEndpointDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  list(@SessionUser() s: SessionPrincipal, @Query() q: Record<string, unknown>) {
    return this.h.list(s.workspaceId, q);
  }

  @Post()
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Create an endpoint; the signing secret is in this answer only (data.secret)' })
  @ApiEnvelope(CreatedWebhookEndpointDto, { status: 201, description: 'Created; data.secret is shown this once' })
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED')
  create(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode, @Body() body: CreateWebhookDto) {
    return this.h.create(s.workspaceId, mode, body, false);
  }

  @Patch(':id')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Update an endpoint' })
  @ApiEnvelope(WebhookEndpointDto)
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', NOT_FOUND, MODE)
  update(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode, @Param('id') id: string, @Body() body: UpdateWebhookDto) {
    return this.h.update(s.workspaceId, mode, id, body);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Send a test event' })
  @ApiEnvelope(WebhookTestResultDto, { description: 'The test delivery was made; data.ok says whether the endpoint took it' })
  @ApiErrors(NOT_FOUND, MODE, 'LIMIT_WEBHOOKDELIVERIES')
  test(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode, @Param('id') id: string) {
    return this.h.test(s.workspaceId, mode, id);
  }

  @Delete(':id')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Delete an endpoint' })
  @ApiEnvelope(null, { description: 'Deleted' })
  @ApiErrors(NOT_FOUND, MODE)
  remove(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode, @Param('id') id: string) {
    return this.h.remove(s.workspaceId, mode, id);
  }
}
