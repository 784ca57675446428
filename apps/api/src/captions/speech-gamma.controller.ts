import { Body, Controller, Get, HttpCode, Inject, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CaptionsService } from '#libs/captions';
import { ApiError, ok, type AppConfig } from '#libs/core';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { APP_CONFIG } from '#libs/app';
import { checkAudioUrl, GENERATE_ERRORS, sourceOf } from './captions.controller.js';
import { GammaCaptionsRequestDto, GammaLanguagesDto, TranscriptionDto } from './captions.dto.js';

/** §4.5 the single-provider captions path (speech-gamma): audio only, its own limits (docs/captions.md). */
@ApiTags('captions')
@Controller('v1/integrations/speech-gamma')
export class SpeechGammaController {
  constructor(private readonly captions: CaptionsService, @Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('languages')
  @Scopes('integrations:read')
  @Integration('speech-gamma')
  @ApiOperation({ summary: 'The languages speech-gamma recognises' })
  @ApiEnvelope(GammaLanguagesDto)
  async languages(@Principal() p: KeyPrincipal) {
    const { languages } = await this.captions.options(p.workspaceId, 'speech-gamma');
    return ok({ languages: languages.filter((l) => l.code !== 'auto') });
  }

  @Post('captions')
  @HttpCode(202)
  @Scopes('assets:write')
  @Integration('speech-gamma')
  @ApiOperation({ summary: 'Generate captions with speech-gamma (MP3, WAV, FLAC or OGG; a video is refused): 200 on a cache hit, else 202' })
  @ApiEnvelope(TranscriptionDto, { status: 202 })
  @ApiEnvelope(TranscriptionDto, { description: 'Answered from the cache (status done)' })
  @ApiErrors(...GENERATE_ERRORS)
  async generate(@Principal() p: KeyPrincipal, @Body() body: GammaCaptionsRequestDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const source = sourceOf(body);
    if (source.kind === 'renderId') {
      throw new ApiError('VALIDATION_FAILED', 'renderId: a finished video cannot be transcribed on this path; use POST /v1/captions, which transcribes its audio track', {
        errors: { renderId: ['a finished video cannot be transcribed here (POST /v1/captions can)'] },
      });
    }
    await checkAudioUrl(source, this.config);
    const { status, transcription } = await this.captions.generate(p.workspaceId, p.plan, {
      mode: p.mode, route: 'speech-gamma', source, provider: 'speech-gamma', cache: true, save: body.save ?? true, name: body.name ?? null,
      settings: {
        languageCode: body.languageCode ?? 'en-US', alternativeLanguageCodes: body.alternativeLanguageCodes ?? [], model: null, diarize: false, keywords: [],
        punctuation: body.punctuation ?? true, filterProfanity: body.filterProfanity ?? false,
      },
      cueOptions: { wordsPerCue: body.wordsPerCue ?? 4, charsPerCue: 42, maxCueSec: 6 },
    });
    reply.status(status);
    return ok(transcription, status === 200 ? 'Answered from an earlier transcription' : `Transcription ${transcription.id} is queued; poll GET /v1/transcriptions/${transcription.id}`);
  }
}
