import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNumber, IsString, Max, MaxLength, Min } from 'class-validator';
import { MAX_SCRIPT_CHARS } from '#libs/voice';
import { MayOmit, Satisfies } from '../http/validation.js';

// The voice-provider rows of §4.5 and the §2 shapes (Voice, Speech model, Character allowance); docs/voice.md.

const notBlank = (v: unknown) => typeof v === 'string' && v.trim().length > 0;

/** §4.5 Generate voice-over (body). */
export class VoiceOverRequestDto {
  @ApiProperty({ maxLength: MAX_SCRIPT_CHARS, description: 'The script (§8: up to 5,000 characters)', example: 'Welcome to the spring sale. Everything is half price until Sunday.' })
  @IsString() @MaxLength(MAX_SCRIPT_CHARS) @Satisfies('notBlank', notBlank, 'text must not be empty')
  text!: string;

  @ApiProperty({ description: 'A voice of GET /v1/integrations/voice-provider/voices', example: '21m00Tcm4TlvDq8ikWAM' })
  @IsString() @MaxLength(128) @Satisfies('notBlank', notBlank, 'voiceId must not be empty')
  voiceId!: string;

  @ApiPropertyOptional({ default: 'multilingual_v2', description: 'A model of GET .../models (ElevenLabs\' ids without "eleven_"; the offline engine has one, espeak-ng, its default)' })
  @MayOmit() @IsString() @MaxLength(64) @Satisfies('notBlank', notBlank, 'modelId must not be empty')
  modelId?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'Lower: more expressive; higher: steadier (the voice\'s own when absent)' })
  @MayOmit() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) stability?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'How closely to keep to the original voice' })
  @MayOmit() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) similarityBoost?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'Style exaggeration; above 0 adds latency' })
  @MayOmit() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) style?: number;

  @ApiPropertyOptional({ maxLength: 255, description: 'The asset\'s name (".mp3" added); default: the opening words of the script' })
  @MayOmit() @IsString() @MaxLength(255) name?: string;

  @ApiPropertyOptional({ maxLength: 128, description: 'Media-library folder' })
  @MayOmit() @IsString() @MaxLength(128) folder?: string;
}

/** §2 Voice. */
export class VoiceDto {
  @ApiProperty({ example: '21m00Tcm4TlvDq8ikWAM' }) id!: string;
  @ApiProperty({ example: 'Rachel' }) name!: string;
  @ApiProperty({ example: 'premade', description: 'The provider\'s category (premade, cloned, generated, professional; offline for espeak-ng)' }) category!: string;
  @ApiProperty({ nullable: true, type: String }) previewUrl!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { accent: 'american', gender: 'female' } }) labels!: Record<string, string>;
}

export class ModelLanguageDto {
  @ApiProperty({ example: 'en' }) id!: string;
  @ApiProperty({ example: 'English' }) name!: string;
}

/** §2 Speech model. */
export class VoiceModelDto {
  @ApiProperty({ example: 'multilingual_v2' }) id!: string;
  @ApiProperty({ example: 'Eleven Multilingual v2' }) name!: string;
  @ApiProperty({ type: [ModelLanguageDto] }) languages!: ModelLanguageDto[];
  @ApiProperty({ example: 10000, description: 'Longest script the model takes per request' }) maxCharacters!: number;
}

/** §2 Character allowance; null limits: none (the offline engine). */
export class CharacterAllowanceDto {
  @ApiProperty({ example: 'creator' }) tier!: string;
  @ApiProperty({ nullable: true, type: Number, description: 'Characters spent this period (null: not counted)' }) characterCount!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'null: unlimited' }) characterLimit!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'null: unlimited' }) charactersRemaining!: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) resetsAt!: string | null;
}
