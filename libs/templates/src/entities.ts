import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PublishCheck } from '#libs/core';
import { workspaceFilter } from '#libs/db';
import type { JsonValue } from '#libs/edit-spec';
import type { FieldDefinition } from './fields.js';

export const TEMPLATE_STATUSES = ['draft', 'published', 'archived'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];
export const TEMPLATE_VISIBILITIES = ['private', 'public'] as const;
export type TemplateVisibility = (typeof TEMPLATE_VISIBILITIES)[number];
export const TEMPLATE_KINDS = ['image', 'video'] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** The last publish review: when it ran and what each check found. Cleared on duplicate (§3). */
export interface TemplateReview {
  at: string;
  passed: boolean;
  checks: PublishCheck[];
}

/**
 * A template (§2, §3): an edit spec with `{{FIELD}}` placeholders and the schema of its fields.
 * `workspaceId` null marks the shared public library the service seeds (docs/decisions.md
 * "Templates"); a workspace's template with visibility `public` and status `published` is in the
 * library too.
 */
export const Template = defineEntity({
  name: 'Template',
  tableName: 'template',
  // A workspace reads its own templates and the library (public and published: the seeded ones and
  // other workspaces' public templates); it changes only its own (docs/decisions.md "Workspace isolation").
  filters: workspaceFilter({ readable: (workspaceId) => ({ $or: [{ workspaceId }, { visibility: 'public', status: 'published' }] }) }),
  indexes: [{ properties: ['workspaceId', 'status'] }, { properties: ['visibility', 'status'] }],
  properties: {
    id: p.string().primary().length(40),
    workspaceId: p.string().length(32).nullable(),
    name: p.string().length(120),
    description: p.text().nullable(),
    kind: p.string().length(5).$type<TemplateKind>(),
    width: p.integer(),
    height: p.integer(),
    aspectRatio: p.string().length(16),
    /** The edit spec as written (placeholders kept), Shotstack Edit JSON. */
    edit: p.json<Record<string, JsonValue>>(),
    fields: p.json<FieldDefinition[]>(),
    fieldGroups: p.json<string[]>(),
    /** Bumped on every save; a save naming an older one is refused (409 TEMPLATE_STALE). */
    version: p.integer(),
    status: p.string().length(9).$type<TemplateStatus>(),
    visibility: p.string().length(7).$type<TemplateVisibility>(),
    categoryId: p.string().length(40).nullable(),
    subcategoryId: p.string().length(40).nullable(),
    tags: p.json<string[]>(),
    /** Lower-cased name, description and tags: what `search` matches. */
    searchText: p.text(),
    usageCount: p.integer(),
    /** Storage key of a picture of the template (libs/storage), shown as `previewUrl` (a URL made when read). */
    previewKey: p.text().nullable(),
    /** The template this one was copied from. */
    sourceTemplateId: p.string().length(40).nullable(),
    review: p.json<TemplateReview>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    publishedAt: p.datetime().nullable(),
  },
});
export type Template = InferEntity<typeof Template>;
