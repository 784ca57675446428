import { ApiError } from '#libs/core';
import { describe, isRecord, Issues, unknownKeys } from './check.js';
import { TEMPLATE_KINDS, TEMPLATE_VISIBILITIES, type TemplateKind, type TemplateVisibility } from './entities.js';

export const TEMPLATE_LIMITS = { name: 120, description: 2000, tags: 20, tag: 40 } as const;

/** A template as a client writes it (import, dashboard create and update), shapes checked. */
export interface TemplateInput {
  name?: string;
  description?: string | null;
  kind?: TemplateKind;
  tags?: string[];
  categoryId?: string | null;
  subcategoryId?: string | null;
  visibility?: TemplateVisibility;
  edit?: Record<string, unknown>;
  /** Raw field definitions: checked by readFieldDefinitions. */
  fields?: unknown;
  fieldGroups?: unknown;
  /** Update only: the version the change was made from. */
  version?: number;
}

export type InputMode = 'import' | 'create' | 'update';

const KEYS: Record<InputMode, readonly string[]> = {
  import: ['name', 'kind', 'description', 'tags', 'categoryId', 'subcategoryId', 'edit', 'fields', 'fieldGroups'],
  create: ['name', 'kind', 'description', 'tags', 'categoryId', 'subcategoryId', 'visibility', 'edit', 'fields', 'fieldGroups'],
  update: ['version', 'name', 'description', 'tags', 'categoryId', 'subcategoryId', 'visibility', 'edit', 'fields', 'fieldGroups'],
};

function optionalId(value: unknown, path: string, issues: Issues): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (typeof value === 'string' && value.length <= 40) return value;
  return void issues.add(path, `must be a category id, got ${describe(value)}`);
}

/**
 * Checks the shape of a template body; a failure answers 400 INVALID_REQUEST with `errors` by path
 * (unknown fields refused with a hint). Required: `name` and `edit` (import, create), `version`
 * (update). The edit's content and the field definitions are checked by the service (422).
 */
export function readTemplateInput(raw: unknown, mode: InputMode): TemplateInput {
  const issues = new Issues();
  if (!isRecord(raw)) throw new ApiError('INVALID_REQUEST', 'The body must be a JSON object', { errors: { body: ['must be a JSON object'] } });
  unknownKeys(raw, KEYS[mode], '', issues);
  const out: TemplateInput = {};
  if (mode !== 'update' || raw.name !== undefined) {
    if (typeof raw.name !== 'string' || raw.name.trim() === '') issues.add('name', raw.name === undefined ? 'is required' : `must be a non-empty string, got ${describe(raw.name)}`);
    else if (raw.name.trim().length > TEMPLATE_LIMITS.name) issues.add('name', `must be at most ${TEMPLATE_LIMITS.name} characters`);
    else out.name = raw.name.trim();
  }
  if (raw.description !== undefined) {
    if (raw.description === null || raw.description === '') out.description = null;
    else if (typeof raw.description !== 'string') issues.add('description', `must be a string, got ${describe(raw.description)}`);
    else if (raw.description.length > TEMPLATE_LIMITS.description) issues.add('description', `must be at most ${TEMPLATE_LIMITS.description} characters`);
    else out.description = raw.description.trim();
  }
  if (raw.kind !== undefined) {
    if ((TEMPLATE_KINDS as readonly unknown[]).includes(raw.kind)) out.kind = raw.kind as TemplateKind;
    else issues.add('kind', `must be image or video, got ${describe(raw.kind)}`);
  }
  if (raw.visibility !== undefined) {
    if ((TEMPLATE_VISIBILITIES as readonly unknown[]).includes(raw.visibility)) out.visibility = raw.visibility as TemplateVisibility;
    else issues.add('visibility', `must be private or public, got ${describe(raw.visibility)}`);
  }
  if (raw.tags !== undefined) {
    if (!Array.isArray(raw.tags) || raw.tags.length > TEMPLATE_LIMITS.tags) issues.add('tags', `must be a list of at most ${TEMPLATE_LIMITS.tags} tags`);
    else {
      const tags: string[] = [];
      raw.tags.forEach((t, i) => {
        if (typeof t !== 'string' || t.trim() === '' || t.length > TEMPLATE_LIMITS.tag) issues.add(`tags[${i}]`, `must be a tag of 1 to ${TEMPLATE_LIMITS.tag} characters, got ${describe(t)}`);
        else if (!tags.includes(t.trim().toLowerCase())) tags.push(t.trim().toLowerCase());
      });
      out.tags = tags;
    }
  }
  const categoryId = optionalId(raw.categoryId, 'categoryId', issues);
  if (categoryId !== undefined) out.categoryId = categoryId;
  const subcategoryId = optionalId(raw.subcategoryId, 'subcategoryId', issues);
  if (subcategoryId !== undefined) out.subcategoryId = subcategoryId;
  if (mode !== 'update' || raw.edit !== undefined) {
    if (!isRecord(raw.edit)) issues.add('edit', raw.edit === undefined ? 'is required' : `must be an edit spec object (timeline and output), got ${describe(raw.edit)}`);
    else out.edit = raw.edit;
  }
  if (raw.fields !== undefined) out.fields = raw.fields;
  if (raw.fieldGroups !== undefined) out.fieldGroups = raw.fieldGroups;
  if (mode === 'update') {
    if (typeof raw.version !== 'number' || !Number.isInteger(raw.version) || raw.version < 1) {
      issues.add('version', raw.version === undefined ? 'is required: the version the change was made from' : `must be a whole number of 1 or more, got ${describe(raw.version)}`);
    } else out.version = raw.version;
  }
  if (!issues.empty) throw new ApiError('INVALID_REQUEST', `Invalid template: ${issues.summary()}`, { errors: issues.errors });
  return out;
}
