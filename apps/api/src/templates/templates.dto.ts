import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiQuery } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, MaxLength, Min } from 'class-validator';
import {
  CATEGORY_IDS, FIELD_TYPES, REVIEW_CHECKS, TEMPLATE_KINDS, TEMPLATE_LIMITS, TEMPLATE_SORTS, TEMPLATE_STATUSES, TEMPLATE_VISIBILITIES,
  type NewTemplateInput, type TemplateInput, type TemplateKind, type TemplateUpdateInput, type TemplateVisibility,
} from '#libs/templates';
import { MayOmit } from '../http/validation.js';

// The template routes' bodies (their shapes; the edit and the field definitions are checked by
// libs/templates with the template, 422 TEMPLATE_VALIDATION_FAILED by path) and answers.

class FieldConfigDto {
  @ApiPropertyOptional({ description: 'text: longest value in characters' }) maxLength?: number;
  @ApiPropertyOptional({ description: 'text' }) minLength?: number;
  @ApiPropertyOptional({ description: 'text: an editor hint' }) multiline?: boolean;
  @ApiPropertyOptional({ description: 'image: W:H the picture should have (checked after fetching)', example: '1:1' }) aspectRatio?: string;
  @ApiPropertyOptional({ description: 'number' }) min?: number;
  @ApiPropertyOptional({ description: 'number' }) max?: number;
  @ApiPropertyOptional({ description: 'number' }) step?: number;
  @ApiPropertyOptional({ description: 'number' }) integer?: boolean;
  @ApiPropertyOptional({ description: 'select: the allowed values', type: [String] }) options?: string[];
}

export class FieldDefinitionDto {
  @ApiProperty({ description: 'Key in render `values`; the edit holds it as {{KEY}}', example: 'HEADLINE' }) key!: string;
  @ApiProperty({ example: 'Headline' }) label!: string;
  @ApiProperty({ enum: FIELD_TYPES }) type!: string;
  @ApiProperty({ description: 'One of fieldGroups', example: 'Text' }) group!: string;
  @ApiProperty() required!: boolean;
  @ApiProperty({ description: 'Any JSON value of the field\'s type, or null', oneOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: {} }, { type: 'object', additionalProperties: true }] }) defaultValue!: unknown;
  @ApiPropertyOptional({ description: 'Hint shown in an empty input' }) placeholder?: string;
  @ApiProperty({ type: FieldConfigDto }) config!: FieldConfigDto;
}

export class TemplateDto {
  @ApiProperty({ example: 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty({ enum: TEMPLATE_KINDS }) kind!: string;
  @ApiProperty() width!: number;
  @ApiProperty() height!: number;
  @ApiProperty({ example: '16:9' }) aspectRatio!: string;
  @ApiProperty({ description: 'Bumped on every save' }) version!: number;
  @ApiProperty({ type: [String] }) fieldGroups!: string[];
  @ApiProperty({ type: [FieldDefinitionDto] }) fields!: FieldDefinitionDto[];
  @ApiProperty({ enum: TEMPLATE_STATUSES }) status!: string;
  @ApiProperty({ enum: TEMPLATE_VISIBILITIES }) visibility!: string;
  @ApiProperty({ description: 'A render naming this template would be accepted (own and published)' }) canRender!: boolean;
  @ApiProperty() isOwn!: boolean;
  @ApiProperty({ description: 'Shared so anyone may copy it (public and published)' }) inLibrary!: boolean;
  @ApiProperty({ nullable: true, type: String, enum: [...CATEGORY_IDS, null] }) categoryId!: string | null;
  @ApiProperty({ nullable: true, type: String }) subcategoryId!: string | null;
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty() usageCount!: number;
  @ApiProperty({ nullable: true, type: String }) previewUrl!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) publishedAt!: string | null;
}

export class TemplateDetailDto extends TemplateDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The edit spec (Shotstack Edit JSON) with its {{FIELD}} placeholders' })
  edit!: Record<string, unknown>;
}

export class TemplateSummaryDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: TEMPLATE_STATUSES }) status!: string;
  @ApiProperty({ enum: TEMPLATE_VISIBILITIES }) visibility!: string;
  @ApiProperty() version!: number;
}

class PublishCheckDto {
  @ApiProperty({ enum: REVIEW_CHECKS }) name!: string;
  @ApiProperty() passed!: boolean;
  @ApiProperty() message!: string;
}

export class PublishResultDto extends TemplateSummaryDto {
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) publishedAt!: string | null;
  @ApiProperty({ type: [PublishCheckDto], description: 'The review that published it' }) checks!: PublishCheckDto[];
}

class SubcategoryDto {
  @ApiProperty({ example: 'post' }) id!: string;
  @ApiProperty({ example: 'Feed post' }) name!: string;
}

export class CategoryDto {
  @ApiProperty({ example: 'social-media' }) id!: string;
  @ApiProperty({ example: 'Social media' }) name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [SubcategoryDto] }) subcategories!: SubcategoryDto[];
}

const NameRules = () => applyDecorators(IsString(), MaxLength(TEMPLATE_LIMITS.name), Matches(/\S/, { message: '$property must not be blank' }));
const VisibilityRules = () => applyDecorators(MayOmit(), IsIn(TEMPLATE_VISIBILITIES));

/** What every template write may carry besides name, kind, visibility and edit. */
class TemplateWriteDto implements TemplateInput {
  @ApiPropertyOptional({ maxLength: TEMPLATE_LIMITS.description, nullable: true, type: String })
  @IsOptional() @IsString() @MaxLength(TEMPLATE_LIMITS.description) description?: string | null;

  @ApiPropertyOptional({ type: [String], maxItems: TEMPLATE_LIMITS.tags, description: `Each 1 to ${TEMPLATE_LIMITS.tag} characters; stored lower-cased, once each` })
  @MayOmit() @IsArray() @ArrayMaxSize(TEMPLATE_LIMITS.tags) @IsString({ each: true }) @Length(1, TEMPLATE_LIMITS.tag, { each: true }) @Matches(/\S/, { each: true, message: 'each tag must not be blank' })
  tags?: string[];

  @ApiPropertyOptional({ nullable: true, type: String, enum: [...CATEGORY_IDS, null], description: 'Optional while editing, required to publish (422 INVALID_CATEGORY when unknown)' })
  @IsOptional() @IsString() @MaxLength(TEMPLATE_LIMITS.categoryId) categoryId?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'A subcategory of categoryId' })
  @IsOptional() @IsString() @MaxLength(TEMPLATE_LIMITS.categoryId) subcategoryId?: string | null;

  // The field schema is the template's own (libs/templates readFieldDefinitions): 422 TEMPLATE_VALIDATION_FAILED by path.
  @ApiPropertyOptional({ type: [FieldDefinitionDto], description: 'Derived from the placeholders when absent (import, create)' })
  @IsOptional() fields?: unknown;

  @ApiPropertyOptional({ type: [String], description: 'Group names in display order; derived from the fields when absent' })
  @IsOptional() fieldGroups?: unknown;
}

/** Decisions.md "Template import": a design as a private draft. */
export class ImportTemplateDto extends TemplateWriteDto implements NewTemplateInput {
  @ApiProperty({ maxLength: TEMPLATE_LIMITS.name }) @NameRules() name!: string;

  @ApiPropertyOptional({ enum: TEMPLATE_KINDS, description: 'Must match edit.output.format when given' })
  @MayOmit() @IsIn(TEMPLATE_KINDS) kind?: TemplateKind;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Shotstack Edit JSON; text may hold {{FIELD}} placeholders' })
  @IsObject() edit!: Record<string, unknown>;
}

export class CreateTemplateDto extends ImportTemplateDto {
  @ApiPropertyOptional({ enum: TEMPLATE_VISIBILITIES, default: 'private', description: 'public: in the shared library once published' })
  @VisibilityRules() visibility?: TemplateVisibility;
}

export class UpdateTemplateDto extends TemplateWriteDto implements TemplateUpdateInput {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The version the change was made from; an older one answers 409 TEMPLATE_STALE' })
  @IsInt() @Min(1) version!: number;

  @ApiPropertyOptional({ maxLength: TEMPLATE_LIMITS.name }) @MayOmit() @NameRules() name?: string;

  @ApiPropertyOptional({ enum: TEMPLATE_VISIBILITIES }) @VisibilityRules() visibility?: TemplateVisibility;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @MayOmit() @IsObject() edit?: Record<string, unknown>;
}

export class PublishTemplateDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'When given, publishing a newer version than this answers 409 TEMPLATE_STALE' })
  @MayOmit() @IsInt() @Min(1) version?: number;
}

/** §4.2 list query parameters. */
export function TemplateListQuery() {
  return applyDecorators(
    ApiQuery({ name: 'scope', required: false, enum: ['mine', 'library'], description: 'mine: own templates; library: public ones; omitted: both' }),
    ApiQuery({ name: 'status', required: false, description: `Own templates only; comma-separated: ${TEMPLATE_STATUSES.join(', ')} (default draft,published)` }),
    ApiQuery({ name: 'kind', required: false, description: 'image, video (comma-separated)' }),
    ApiQuery({ name: 'categoryId', required: false, description: `Comma-separated: ${CATEGORY_IDS.join(', ')}` }),
    ApiQuery({ name: 'search', required: false, description: 'Name, tags and description; up to 128 characters' }),
    ApiQuery({ name: 'sort', required: false, enum: TEMPLATE_SORTS, description: 'Default popular' }),
    ApiQuery({ name: 'order', required: false, enum: ['asc', 'desc'], description: 'Reverses the sort\'s natural direction' }),
    ApiQuery({ name: 'page', required: false, type: Number }),
    ApiQuery({ name: 'limit', required: false, type: Number, description: '1 to 100, default 20' }),
  );
}
