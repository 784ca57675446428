import { Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ok, type AppConfig } from '#libs/core';
import { StatusCallbacks } from '#libs/messaging';
import { ApiEnvelope, ApiErrors, Public } from '../http/decorators.js';
import { rawBodyOf } from '../http/raw-body.js';
import { APP_CONFIG } from '#libs/app';
import { StatusCallbackResultDto } from './messaging.dto.js';

/**
 * The messaging providers' delivery status callbacks (docs/messaging.md "Status callbacks"): public
 * (the providers carry no API key), each checked by the provider's signature over the bytes received
 * against the workspace's connected account; a bad one is 403 INVALID_SIGNATURE and records nothing.
 */
@ApiTags('messaging')
@Controller('v1/integrations/messaging-provider/status')
export class StatusCallbacksController {
  constructor(private readonly callbacks: StatusCallbacks, @Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('whatsapp/:workspaceId')
  @Public()
  @ApiOperation({ summary: 'Meta\'s webhook verification: answers hub.challenge (text/plain) when hub.verify_token is the connected account\'s' })
  @ApiResponse({ status: 200, description: 'hub.challenge, as sent', content: { 'text/plain': { schema: { type: 'string', example: '1158201444' } } } })
  @ApiErrors('INVALID_SIGNATURE')
  async verifyWhatsApp(@Param('workspaceId') workspaceId: string, @Query() q: Record<string, unknown>, @Res() reply: FastifyReply) {
    const text = (k: string) => (typeof q[k] === 'string' ? q[k] : undefined);
    const challenge = await this.callbacks.verifyWhatsApp(workspaceId, { mode: text('hub.mode'), token: text('hub.verify_token'), challenge: text('hub.challenge') });
    return reply.status(200).type('text/plain').send(challenge);
  }

  @Post('whatsapp/:workspaceId')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'WhatsApp Cloud API status webhooks (X-Hub-Signature-256 over the raw body): sent, delivered, read, failed' })
  // The body is Meta's, read only once its signature over the raw bytes holds: no DTO shapes it first.
  @ApiBody({ schema: { type: 'object', description: 'Meta\'s webhook: {object: whatsapp_business_account, entry: [{changes: [{field: messages, value: {statuses: [{id, status, timestamp, recipient_id, biz_opaque_callback_data?, errors?}]}}]}]}' } })
  @ApiEnvelope(StatusCallbackResultDto)
  @ApiErrors('INVALID_SIGNATURE')
  async whatsApp(@Param('workspaceId') workspaceId: string, @Req() req: FastifyRequest, @Headers('x-hub-signature-256') signature: string | undefined) {
    return ok(await this.callbacks.whatsApp(workspaceId, rawBodyOf(req), signature, req.body));
  }

  @Post('twilio/:workspaceId')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Twilio status callbacks (form-encoded; X-Twilio-Signature over PUBLIC_URL + the path and the sorted parameters)' })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ schema: { type: 'object', additionalProperties: { type: 'string' }, description: 'Twilio\'s status callback: MessageSid, MessageStatus, ErrorCode, AccountSid, From, To…' } })
  @ApiEnvelope(StatusCallbackResultDto)
  @ApiErrors('INVALID_SIGNATURE')
  async twilio(@Param('workspaceId') workspaceId: string, @Req() req: FastifyRequest, @Headers('x-twilio-signature') signature: string | undefined) {
    const form = req.body && typeof req.body === 'object' ? (req.body as Record<string, string>) : {};
    const url = `${this.config.publicUrl}${req.url}`;
    return ok(await this.callbacks.twilio(workspaceId, url, signature, form));
  }
}
