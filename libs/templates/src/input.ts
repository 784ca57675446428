import type { TemplateKind, TemplateVisibility } from './entities.js';

export const TEMPLATE_LIMITS = { name: 120, description: 2000, tags: 20, tag: 40, categoryId: 40 } as const;

/**
 * A template as a client writes it (import, dashboard create and update), its shape checked by the
 * API's DTOs (types, lengths, sets, unknown fields). The field definitions and the edit's content
 * are checked by the service with the template (422 TEMPLATE_VALIDATION_FAILED).
 */
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
}

/** Import and dashboard create: a name and an edit. */
export interface NewTemplateInput extends TemplateInput {
  name: string;
  edit: Record<string, unknown>;
}

/** Dashboard save: the version the change was made from. */
export interface TemplateUpdateInput extends TemplateInput {
  version: number;
}

export type InputMode = 'import' | 'create';

/** Text trimmed, an empty description or category as none, tags lower-cased and each kept once. */
export function tidyTemplateInput<T extends TemplateInput>(input: T): T {
  const out: T = { ...input };
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = input.description?.trim() || null;
  if (input.tags !== undefined) out.tags = [...new Set(input.tags.map((t) => t.trim().toLowerCase()))];
  if (input.categoryId !== undefined) out.categoryId = input.categoryId || null;
  if (input.subcategoryId !== undefined) out.subcategoryId = input.subcategoryId || null;
  return out;
}
