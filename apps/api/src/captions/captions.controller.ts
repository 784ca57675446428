import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  CaptionsService, SPEECH_PROVIDERS, TranscriptionsService, type CaptionRequest, type SpeechProvider, type TranscriptionSource,
} from '#libs/captions';
import { ApiError, ok, type AppConfig } from '#libs/core';
import { OutboundRefused, resolveOutbound } from '#libs/outbound';
import { ApiEnvelope, ApiErrors, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { APP_CONFIG } from '#libs/app';
import {
  CaptionsRequestDto, ListTranscriptionsQuery, ProviderOptionsDto, ProvidersDto, TranscriptionDto, TranscriptionListItemDto, TranscriptionRequestDto,
} from './captions.dto.js';

const SOURCES = ['audioUrl', 'assetId', 'renderId'] as const;

/** The one source of a generate request (422 naming the fields when there is none or more than one). */
export function sourceOf(body: Partial<Record<(typeof SOURCES)[number], string>>): TranscriptionSource {
  const given = SOURCES.filter((k) => body[k] !== undefined);
  if (given.length === 1) return { kind: given[0], value: body[given[0]] as string };
  const why = given.length ? `only one of audioUrl, assetId, renderId may be given (got ${given.join(', ')})` : 'one of audioUrl, assetId, renderId is required';
  throw new ApiError('VALIDATION_FAILED', `The recording: ${why}`, { errors: Object.fromEntries((given.length ? given : SOURCES).map((k) => [k, [why]])) });
}

/** audioUrl under the deployment's outbound rules, refused before anything is queued (decisions.md: 422). */
export async function checkAudioUrl(source: TranscriptionSource, config: Pick<AppConfig, 'env'>): Promise<void> {
  if (source.kind !== 'audioUrl') return;
  try {
    await resolveOutbound(source.value, config.env === 'production' ? 'production' : 'development');
  } catch (err) {
    const why = err instanceof OutboundRefused ? err.message : 'its host name does not resolve';
    throw new ApiError('VALIDATION_FAILED', `audioUrl cannot be fetched: ${why}`, { errors: { audioUrl: [why] } });
  }
}

export const GENERATE_ERRORS = [
  'VALIDATION_FAILED', 'LIMIT_INTEGRATION_NOT_ALLOWED', 'INTEGRATION_NOT_CONNECTED', 'INTEGRATION_REAUTH_REQUIRED', 'ASSET_NOT_FOUND', 'RENDER_NOT_FOUND',
] as const;

/** §4.3 captions and transcriptions with an API key (docs/captions.md). */
@ApiTags('captions')
@Controller('v1')
export class CaptionsController {
  constructor(
    private readonly captions: CaptionsService,
    private readonly transcriptions: TranscriptionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('captions/providers')
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'The speech providers: connected or not, what each supports, and the transcription cache\'s figures' })
  @ApiEnvelope(ProvidersDto)
  async providers(@Principal() p: KeyPrincipal) {
    return ok(await this.captions.providers(p.workspaceId));
  }

  @Get('captions/options')
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'The default provider\'s languages (auto: detect) and models' })
  @ApiEnvelope(ProviderOptionsDto)
  async defaultOptions(@Principal() p: KeyPrincipal) {
    return ok(await this.captions.options(p.workspaceId));
  }

  @Get('captions/options/:provider')
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'A provider\'s languages (auto: detect) and models' })
  @ApiEnvelope(ProviderOptionsDto)
  @ApiErrors('NOT_FOUND')
  async options(@Principal() p: KeyPrincipal, @Param('provider') provider: string) {
    if (!(SPEECH_PROVIDERS as readonly string[]).includes(provider)) throw new ApiError('NOT_FOUND', `No speech provider "${provider}"; providers: ${SPEECH_PROVIDERS.join(', ')}`);
    return ok(await this.captions.options(p.workspaceId, provider as SpeechProvider));
  }

  @Post('captions')
  @HttpCode(202)
  @Scopes('assets:write')
  @ApiOperation({ summary: 'Generate captions: 200 with the done transcription on a cache hit, else 202 {id, status}: poll GET /v1/transcriptions/{id}' })
  @ApiEnvelope(TranscriptionDto, { status: 202, description: 'Queued (status queued); poll GET /v1/transcriptions/{id}' })
  @ApiEnvelope(TranscriptionDto, { status: 200, description: 'Answered from the cache (status done)' })
  @ApiErrors(...GENERATE_ERRORS)
  async generate(@Principal() p: KeyPrincipal, @Body() body: CaptionsRequestDto, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.answer(p, reply, {
      ...(await this.common(body)),
      route: 'captions',
      settings: {
        languageCode: body.languageCode, alternativeLanguageCodes: body.alternativeLanguageCodes ?? [], model: body.model ?? null,
        diarize: body.diarize ?? false, keywords: body.keywords ?? [], punctuation: body.punctuation ?? true, filterProfanity: body.filterProfanity ?? false,
      },
      cueOptions: { wordsPerCue: body.wordsPerCue ?? 4, charsPerCue: body.charsPerCue ?? 42, maxCueSec: body.maxCueSec ?? 6 },
    });
  }

  @Post('transcriptions')
  @HttpCode(202)
  @Scopes('assets:write')
  @ApiOperation({ summary: 'Generate captions (older path of POST /v1/captions, fewer options): answers Deprecation and Link headers', deprecated: true })
  @ApiEnvelope(TranscriptionDto, { status: 202 })
  @ApiEnvelope(TranscriptionDto, { description: 'Answered from the cache (status done)' })
  @ApiErrors(...GENERATE_ERRORS)
  async generateOlder(@Principal() p: KeyPrincipal, @Body() body: TranscriptionRequestDto, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('deprecation', 'true');
    reply.header('link', `</${this.config.prefix ? `${this.config.prefix}/` : ''}v1/captions>; rel="successor-version"`);
    return this.answer(p, reply, {
      ...(await this.common(body)),
      route: 'transcriptions',
      settings: { languageCode: body.languageCode, alternativeLanguageCodes: [], model: null, diarize: false, keywords: [], punctuation: true, filterProfanity: false },
      cueOptions: { wordsPerCue: body.wordsPerCue ?? 4, charsPerCue: 42, maxCueSec: 6 },
    });
  }

  @Get('transcriptions')
  @Scopes('assets:read')
  @ApiOperation({ summary: 'The workspace\'s transcriptions, newest first' })
  @ApiEnvelope(TranscriptionListItemDto, { isArray: true, paged: false })
  async list(@Principal() p: KeyPrincipal, @Query() q: ListTranscriptionsQuery) {
    const rows = await this.transcriptions.list(p.workspaceId, q.limit ?? 20);
    return ok(rows.map((r) => {
      const v = this.transcriptions.view(r);
      return { id: v.id, status: v.status, mode: v.mode, languageCode: v.languageCode, srtUrl: v.srtUrl };
    }));
  }

  @Get('transcriptions/:id')
  @Scopes('assets:read')
  @ApiOperation({ summary: 'A transcription: status, transcript, cues with per-word timings, .vtt/.srt URLs' })
  @ApiEnvelope(TranscriptionDto)
  @ApiErrors('TRANSCRIPTION_NOT_FOUND')
  async get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(this.transcriptions.view(await this.transcriptions.get(p.workspaceId, id)));
  }

  private async common(body: TranscriptionRequestDto): Promise<Pick<CaptionRequest, 'source' | 'provider' | 'cache' | 'save'>> {
    const source = sourceOf(body);
    await checkAudioUrl(source, this.config);
    return { source, provider: body.provider, cache: body.cache ?? true, save: body.save ?? true };
  }

  private async answer(p: KeyPrincipal, reply: FastifyReply, req: Omit<CaptionRequest, 'mode'>) {
    const { status, transcription } = await this.captions.generate(p.workspaceId, p.plan, { ...req, mode: p.mode });
    reply.status(status);
    return ok(transcription, status === 200
      ? 'Answered from an earlier transcription of the same recording and settings'
      : `Transcription ${transcription.id} is queued; poll GET /v1/transcriptions/${transcription.id}`);
  }
}
