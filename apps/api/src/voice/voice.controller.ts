import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AssetsService } from '#libs/assets';
import { ok } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { JobQueues } from '#libs/queue';
import { VoiceService } from '#libs/voice';
import { AssetDto } from '../assets/assets.dto.js';
import { queueProcessing } from '../assets/upload.js';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { Connection, Principal, type KeyPrincipal } from '../http/principal.js';
import { CharacterAllowanceDto, VoiceDto, VoiceModelDto, VoiceOverRequestDto } from './voice.dto.js';

const PROVIDER_ERRORS = ['PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR'] as const;

/** §4.5 the voice-provider rows (docs/voice.md): ElevenLabs' API, or espeak-ng offline. */
@ApiTags('voice')
@Controller('v1/integrations/voice-provider')
export class VoiceController {
  constructor(private readonly voice: VoiceService, private readonly assets: AssetsService, private readonly queues: JobQueues) {}

  @Get('voices')
  @Scopes('integrations:read')
  @Integration('voice-provider')
  @ApiOperation({ summary: 'The voices of the connected voice provider' })
  @ApiEnvelope(VoiceDto, { isArray: true, paged: false })
  @ApiErrors(...PROVIDER_ERRORS)
  async voices(@Connection() use: UsableConnection) {
    return ok(await this.voice.voices(use));
  }

  @Get('models')
  @Scopes('integrations:read')
  @Integration('voice-provider')
  @ApiOperation({ summary: 'The speech models of the connected voice provider' })
  @ApiEnvelope(VoiceModelDto, { isArray: true, paged: false })
  @ApiErrors(...PROVIDER_ERRORS)
  async models(@Connection() use: UsableConnection) {
    return ok(await this.voice.models(use));
  }

  @Get('usage')
  @Scopes('integrations:read')
  @Integration('voice-provider')
  @ApiOperation({ summary: 'The character allowance of the connected voice-provider account' })
  @ApiEnvelope(CharacterAllowanceDto)
  @ApiErrors(...PROVIDER_ERRORS)
  async usage(@Connection() use: UsableConnection) {
    return ok(await this.voice.usage(use));
  }

  @Post('speech')
  @Scopes('assets:write')
  @Integration('voice-provider')
  @ApiOperation({ summary: 'Say a script (up to 5,000 characters) and save it to the media library as an MP3 audio asset; no service credits, the storage allowance applies. The asset is processing: it is ready (with its duration) shortly, see asset.ready' })
  @ApiEnvelope(AssetDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'LIMIT_STORAGE', ...PROVIDER_ERRORS)
  async speech(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: VoiceOverRequestDto) {
    const row = await this.voice.speak(p.workspaceId, p.plan, use, {
      text: body.text, voiceId: body.voiceId, modelId: body.modelId ?? null, stability: body.stability, similarityBoost: body.similarityBoost, style: body.style,
      name: body.name ?? null, folder: body.folder ?? null,
    }, p.mode);
    await queueProcessing(this.queues, this.assets, row);
    return ok(this.assets.view(row), `Saved as ${row.id}; it is being processed and is ready (with its duration) shortly`);
  }
}
