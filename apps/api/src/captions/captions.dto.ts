import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsString, Max, MaxLength, Min } from 'class-validator';
import { SPEECH_PROVIDERS, TRANSCRIPTION_STATUSES } from '#libs/captions';
import { MayOmit, Satisfies } from '../http/validation.js';

// The bodies and answers of §4.3 and the speech-gamma rows of §4.5 (docs/captions.md).

/** A BCP-47 tag as providers take them (`en`, `en-US`, `pt-BR`, `zh-Hant-TW`, `yue-Hant-HK`). */
const BCP47 = /^[a-zA-Z]{2,3}(?:-[a-zA-Z0-9]{2,8}){0,3}$/;
const isLanguage = (v: unknown) => typeof v === 'string' && BCP47.test(v);
const isHttpUrl = (v: unknown) => {
  if (typeof v !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/** What every generate route takes: where the recording is, and how the cues are cut. */
class SourceDto {
  @ApiPropertyOptional({ description: 'URL of an audio or video file (fetched with the outbound URL rules). One of audioUrl, assetId, renderId', maxLength: 2048 })
  @MayOmit() @IsString() @MaxLength(2048) @Satisfies('isHttpUrl', isHttpUrl, 'audioUrl must be an absolute http(s) URL')
  audioUrl?: string;

  @ApiPropertyOptional({ description: 'An audio or video asset of the media library (ready); the fastest route to a cache hit', example: 'ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' })
  @MayOmit() @IsString() @MaxLength(64) assetId?: string;

  @ApiPropertyOptional({ description: 'A finished video render of this workspace: its audio track is transcribed', example: 'rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' })
  @MayOmit() @IsString() @MaxLength(64) renderId?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 12, default: 4, description: 'Words per caption; changing it on a repeat is free (cached word timings re-cut)' })
  @MayOmit() @IsInt() @Min(1) @Max(12) wordsPerCue?: number;

  @ApiPropertyOptional({ default: true, description: 'false: no .vtt/.srt files are written' })
  @MayOmit() @IsBoolean() save?: boolean;
}

/** The older path's body (§4.3): audioUrl, assetId, renderId, provider, languageCode, wordsPerCue, cache, save. */
export class TranscriptionRequestDto extends SourceDto {
  @ApiPropertyOptional({ enum: SPEECH_PROVIDERS, description: 'Omitted: the first connected one that can take the request, in this order' })
  @MayOmit() @IsIn(SPEECH_PROVIDERS) provider?: (typeof SPEECH_PROVIDERS)[number];

  @ApiPropertyOptional({ description: 'BCP-47 tag, or auto (detect) where the provider detects; default auto there, else en-US', example: 'en-US' })
  @MayOmit() @IsString() @MaxLength(35) @Satisfies('isLanguage', (v) => v === 'auto' || isLanguage(v), 'languageCode must be a BCP-47 tag such as en-US, or auto')
  languageCode?: string;

  @ApiPropertyOptional({ oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['fresh'] }], default: true, description: 'false or fresh: transcribe again (the new words replace the cached ones)' })
  @MayOmit() @Satisfies('isCacheMode', (v) => typeof v === 'boolean' || v === 'fresh', 'cache must be true, false or "fresh"')
  cache?: boolean | 'fresh';
}

/** POST /v1/captions (§4.3): every option. */
export class CaptionsRequestDto extends TranscriptionRequestDto {
  @ApiPropertyOptional({ type: [String], maxItems: 3, description: 'Other languages the speaker may switch to (providers with multiLanguage)' })
  @MayOmit() @IsArray() @ArrayMaxSize(3) @Satisfies('isLanguage', isLanguage, 'each alternative language must be a BCP-47 tag such as es-ES', { each: true })
  alternativeLanguageCodes?: string[];

  @ApiPropertyOptional({ description: 'Provider model id (GET /v1/captions/options lists them); default: the provider\'s own', maxLength: 100 })
  @MayOmit() @IsString() @MaxLength(100) @Satisfies('isModelId', (v) => typeof v === 'string' && /^[\w.:-]+$/.test(v), 'model must be a model id (letters, digits, . _ : -)')
  model?: string;

  @ApiPropertyOptional({ default: false, description: 'Label speakers (providers with diarize)' })
  @MayOmit() @IsBoolean() diarize?: boolean;

  @ApiPropertyOptional({ type: [String], maxItems: 100, description: 'Words to favour (providers with keywords)' })
  @MayOmit() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(100, { each: true }) keywords?: string[];

  @ApiPropertyOptional({ minimum: 10, maximum: 200, default: 42, description: 'Characters per caption' })
  @MayOmit() @IsInt() @Min(10) @Max(200) charsPerCue?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 30, default: 6, description: 'Longest one caption is held, in seconds' })
  @MayOmit() @IsNumber() @Min(1) @Max(30) maxCueSec?: number;

  @ApiPropertyOptional({ default: true })
  @MayOmit() @IsBoolean() punctuation?: boolean;

  @ApiPropertyOptional({ default: false, description: 'Mask profanity (providers with profanityFilter)' })
  @MayOmit() @IsBoolean() filterProfanity?: boolean;
}

/** POST /v1/integrations/speech-gamma/captions (§4.5). */
export class GammaCaptionsRequestDto extends SourceDto {
  @ApiPropertyOptional({ default: 'en-US', description: 'BCP-47 tag' })
  @MayOmit() @IsString() @MaxLength(35) @Satisfies('isLanguage', isLanguage, 'languageCode must be a BCP-47 tag such as en-US')
  languageCode?: string;

  @ApiPropertyOptional({ type: [String], maxItems: 3 })
  @MayOmit() @IsArray() @ArrayMaxSize(3) @Satisfies('isLanguage', isLanguage, 'each alternative language must be a BCP-47 tag such as es-ES', { each: true })
  alternativeLanguageCodes?: string[];

  @ApiPropertyOptional({ default: true }) @MayOmit() @IsBoolean() punctuation?: boolean;
  @ApiPropertyOptional({ default: false }) @MayOmit() @IsBoolean() filterProfanity?: boolean;

  @ApiPropertyOptional({ maxLength: 100, description: 'Base filename of the .vtt/.srt saved to the media library' })
  @MayOmit() @IsString() @MaxLength(100) @Satisfies('isName', (v) => typeof v === 'string' && /^[^/\\\p{Cc}]+$/u.test(v), 'name must be a file name without slashes or control characters')
  name?: string;
}

export class ListTranscriptionsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
}

class CueWordDto {
  @ApiProperty() word!: string;
  @ApiProperty({ description: 'Seconds' }) start!: number;
  @ApiProperty({ description: 'Seconds' }) end!: number;
  @ApiProperty({ minimum: 0, maximum: 1 }) confidence!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Speaker number when diarized' }) speaker!: number | null;
}

class CueDto {
  @ApiProperty({ description: 'Seconds' }) start!: number;
  @ApiProperty({ description: 'Seconds' }) end!: number;
  @ApiProperty() text!: string;
  @ApiProperty({ type: [CueWordDto] }) words!: CueWordDto[];
}

class TranscriptionErrorDto {
  @ApiProperty({ example: 'INTEGRATION_REAUTH_REQUIRED' }) code!: string;
  @ApiProperty() message!: string;
}

/** §2 Transcription. */
export class TranscriptionDto {
  @ApiProperty({ example: 'trs_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: TRANSCRIPTION_STATUSES, description: 'queued → processing → done | failed' }) status!: string;
  @ApiProperty({ enum: ['live', 'test'], description: 'The mode it was asked in (a test key\'s or a test-mode session\'s: test; a render\'s captions: the render\'s)' }) mode!: string;
  @ApiProperty({ enum: SPEECH_PROVIDERS }) provider!: string;
  @ApiProperty({ nullable: true, type: String }) languageCode!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The whole transcript' }) text!: string | null;
  @ApiProperty({ nullable: true, type: [CueDto] }) cues!: CueDto[] | null;
  @ApiProperty({ nullable: true, type: String }) vttUrl!: string | null;
  @ApiProperty({ nullable: true, type: String }) srtUrl!: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Seconds of audio' }) audioSec!: number | null;
  @ApiProperty({ description: 'Answered from an earlier transcription of the same recording and settings (no provider call)' }) fromCache!: boolean;
  @ApiProperty({ nullable: true, type: TranscriptionErrorDto }) error!: TranscriptionErrorDto | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) completedAt!: string | null;
}

export class TranscriptionListItemDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: TRANSCRIPTION_STATUSES }) status!: string;
  @ApiProperty({ enum: ['live', 'test'] }) mode!: string;
  @ApiProperty({ nullable: true, type: String }) languageCode!: string | null;
  @ApiProperty({ nullable: true, type: String }) srtUrl!: string | null;
}

class SupportDto {
  @ApiProperty() video!: boolean;
  @ApiProperty() autoLanguage!: boolean;
  @ApiProperty() multiLanguage!: boolean;
  @ApiProperty() diarize!: boolean;
  @ApiProperty() keywords!: boolean;
  @ApiProperty() profanityFilter!: boolean;
  @ApiProperty({ description: 'Largest file, in bytes' }) maxBytes!: number;
}

class ProviderDto {
  @ApiProperty({ enum: SPEECH_PROVIDERS }) slug!: string;
  @ApiProperty() name!: string;
  @ApiProperty() connected!: boolean;
  @ApiProperty({ nullable: true, type: String }) account!: string | null;
  @ApiProperty({ description: 'The one chosen when a request names none' }) recommended!: boolean;
  @ApiProperty({ enum: ['provider', 'local'] }) engine!: string;
  @ApiProperty({ enum: ['connected', 'reauth_required', 'not_connected'] }) status!: string;
  @ApiProperty({ type: SupportDto }) support!: SupportDto;
}

class CacheDto {
  @ApiProperty({ description: 'Transcriptions a provider ran' }) transcribed!: number;
  @ApiProperty({ description: 'Transcriptions answered from the cache' }) reused!: number;
  @ApiProperty({ description: 'Seconds of audio not sent to a provider again' }) secondsSaved!: number;
  @ApiProperty({ minimum: 0, maximum: 1 }) hitRate!: number;
}

export class ProvidersDto {
  @ApiProperty({ type: [ProviderDto] }) providers!: ProviderDto[];
  @ApiProperty() connected!: number;
  @ApiProperty({ type: CacheDto }) cache!: CacheDto;
}

class LanguageDto {
  @ApiProperty({ example: 'en-US' }) code!: string;
  @ApiProperty({ example: 'English (United States)' }) label!: string;
}

class ModelDto {
  @ApiProperty() id!: string;
  @ApiProperty() label!: string;
  @ApiProperty() hint!: string;
}

export class ProviderOptionsDto {
  @ApiProperty({ enum: SPEECH_PROVIDERS }) provider!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: SupportDto }) support!: SupportDto;
  @ApiProperty({ type: [LanguageDto], description: 'auto: detect' }) languages!: LanguageDto[];
  @ApiProperty({ type: [ModelDto] }) models!: ModelDto[];
}

export class GammaLanguagesDto {
  @ApiProperty({ type: [LanguageDto] }) languages!: LanguageDto[];
}
