import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors, ApiEventStream, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { RenderEventStreams } from './render-events.js';

/** The live feed of a workspace's renders (issue 18: the dashboard's gallery). */
@ApiTags('renders')
@Controller('v1/renders')
export class RenderEventsController {
  constructor(private readonly streams: RenderEventStreams) {}

  @Get('events')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'A live stream of the workspace\'s render events (render.queued … render.cancelled) and progress of running renders (render.progress, at most 2 a second per render), as server-sent events, each with livemode; a test key\'s (or a test-mode session\'s) stream carries the test renders\' events only' })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume: the render events after this id are sent first (up to 100)' })
  @ApiEventStream('The stream: never ends by itself; a heartbeat comment every 15 s')
  @ApiErrors('VALIDATION_FAILED')
  async events(@Principal() p: KeyPrincipal, @Headers('last-event-id') lastEventId: string | undefined, @Res() reply: FastifyReply) {
    await this.streams.stream(p.workspaceId, p.mode, lastEventId, reply);
  }
}
