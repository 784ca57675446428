import { UniqueConstraintViolationException, type EntityManager, type FilterQuery, type MikroORM, type RequiredEntityData } from '@mikro-orm/core';
import { ApiError, likeTerm, newId, type FieldErrors, type ListQuery, type ListSpec, type SortOrder } from '#libs/core';
import { underWorkspaceLock, type Plan } from '#libs/workspaces';
import { type OutboundPolicy } from '#libs/outbound';
import { allWorkspaces, forWorkspace, queries, type Tables } from '#libs/db';
import type { JsonValue } from '#libs/edit-spec';
import { writeEvent } from '#libs/events';
import type { StorageDriver } from '#libs/storage';
import { CATEGORY_IDS, categoryProblem, TEMPLATE_CATEGORIES } from './categories.js';
import { Issues } from './check.js';
import {
  Template, TEMPLATE_KINDS, TEMPLATE_STATUSES, type TemplateKind, type TemplateReview, type TemplateStatus, type TemplateVisibility,
} from './entities.js';
import { deriveFields, readFieldDefinitions, type FieldDefinition } from './fields.js';
import { tidyTemplateInput, type InputMode, type NewTemplateInput, type TemplateInput, type TemplateUpdateInput } from './input.js';
import { httpReachability } from './reachability.js';
import { reviewTemplate, type AssetChecker, type MediaCheckers, type ReachabilityChecker, type Review } from './review.js';
import { checkTemplateEdit, type TemplateGeometry } from './template-edit.js';

export const TEMPLATE_SORTS = ['popular', 'newest', 'oldest', 'updated', 'name'] as const;
export type TemplateSort = (typeof TEMPLATE_SORTS)[number];

/** §4.2 list query: scope, status (own templates only), kind, categoryId, search; default sort popular. */
export const TEMPLATE_LIST: ListSpec<TemplateSort> = {
  sort: TEMPLATE_SORTS,
  defaultSort: 'popular',
  limit: { default: 20, max: 100 },
  sets: { scope: ['mine', 'library'], status: TEMPLATE_STATUSES, kind: TEMPLATE_KINDS, categoryId: CATEGORY_IDS },
  search: { maxLength: 128 },
};

/** Each sort's column and natural direction; an explicit `order` reverses it. */
const SORTS: Record<TemplateSort, { column: 'usageCount' | 'createdAt' | 'updatedAt' | 'name'; order: SortOrder }> = {
  popular: { column: 'usageCount', order: 'desc' },
  newest: { column: 'createdAt', order: 'desc' },
  oldest: { column: 'createdAt', order: 'asc' },
  updated: { column: 'updatedAt', order: 'desc' },
  name: { column: 'name', order: 'asc' },
};

/** A library template as seeded: everything but what the service derives (geometry, version, counts). */
export interface LibrarySeed {
  id: string;
  name: string;
  description: string;
  categoryId: string;
  subcategoryId: string;
  tags: string[];
  edit: Record<string, JsonValue>;
  fields: FieldDefinition[];
  fieldGroups: string[];
  /** Storage key of a picture of the template with its default values (libs/templates/seed/previews, stored at start). */
  previewKey?: string | null;
}

export interface TemplatesOptions {
  /** Outbound URL policy of the review's media check (development allows loopback and plain HTTP). */
  policy: OutboundPolicy;
  /** Replaces the HTTP media check (tests, or a renderer-backed one). */
  reachability?: ReachabilityChecker;
  /** The review's check of asset ids (the media library); without one, a template that names an asset fails its review. */
  assets?: AssetChecker;
  /** Turns stored previews' keys into URLs when templates are shown (signed afresh on each read with S3). */
  storage: Pick<StorageDriver, 'url'>;
}

/** The asset check of a deployment without a media library: no id can be used. */
const NO_ASSETS: AssetChecker = async (_workspaceId, ids) => ids.map((id) => ({ id, reason: 'this deployment has no media library to check it in' }));

export type TemplateView = ReturnType<TemplatesService['view']>;

/** What a render needs from its template (the renders module calls findForRender). */
export interface RenderableTemplate {
  template: Template;
  /** The stored edit spec, placeholders kept: merge validated values into it, then parse. */
  edit: Record<string, JsonValue>;
  fields: FieldDefinition[];
}

function searchText(t: { name: string; description?: string | null; tags: readonly string[] }): string {
  return [t.name, t.description ?? '', t.tags.join(' ')].join('\n').toLowerCase();
}

/**
 * Who writes a template, as the library rule needs it (decisions.md "Stored secrets and limits (issue
 * 28)"): a write that leaves a template public (in the shared library once published, where every
 * workspace sees it) is an owner's. Members create, save, publish and archive private templates.
 */
export interface TemplateWriter {
  /** The caller may put templates in the shared library (a workspace owner). */
  mayShare: boolean;
}

/** 403 ROLE_REQUIRED unless `writer` may share, when the template is public after the write. */
function assertMayShare(writer: TemplateWriter, visibility: TemplateVisibility | undefined, what: string): void {
  if (visibility === 'public' && !writer.mayShare) {
    throw new ApiError('ROLE_REQUIRED', `Only an owner of the workspace may ${what} a public template: public templates are in the shared library every workspace sees`);
  }
}

function stale(id: string, current: number, given: number): ApiError {
  return new ApiError('TEMPLATE_STALE', `Template ${id} was saved by someone else since version ${given}; it is now at version ${current}. Reload it and apply the change again`, {
    data: { id, version: current },
  });
}

/** JSON with object keys sorted: PostgreSQL's jsonb does not keep key order, so stored and seeded content compare this way. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v,
  );
}

/** One more render of a template (the `popular` sort): by its key, in the render's transaction. */
const RECORD_USAGE = queries<Tables<typeof Template>>().prepare((db, p: { id: string }) =>
  db.updateTable('template').set((eb) => ({ usage_count: eb('usage_count', '+', 1) })).where('id', '=', p.id));

/**
 * What a render checks of its own template on every request (one prepared statement, no JSON read):
 * whether it is published, and which content it holds now (`version` is bumped by every save of the
 * edit or the fields; `updated_at` by every ORM write).
 */
const RENDER_HEAD = queries<Tables<typeof Template>>().prepare((db, p: { id: string; workspaceId: string }) => db
  .selectFrom('template').select(['status', 'version', 'updated_at']).where('id', '=', p.id).where('workspace_id', '=', p.workspaceId));

/** Templates whose content a process keeps for renders (decisions.md "Speed (issue 33): still-hop"): the oldest goes beyond. */
export const RENDER_CACHE_SIZE = 256;

function notFound(id: string): ApiError {
  return new ApiError('TEMPLATE_NOT_FOUND', `Template ${id} does not exist or is not available`);
}

/**
 * Templates (§2, §3, §4.2; decisions.md "Template import", "done in the dashboard"): the
 * workspace's own templates and the shared library, their field schemas, the publish review, and what
 * renders need. Every query runs on `forWorkspace` (the `workspace` filter: the workspace's own
 * templates, and the library when reading); the operator's `…Any` methods and the library's seeding on
 * `allWorkspaces`.
 */
export class TemplatesService {
  private readonly media: MediaCheckers;
  private readonly storage: Pick<StorageDriver, 'url'>;
  /** Published templates' content by id, with the version and write time it was read at (findForRender). */
  private readonly forRender = new Map<string, { version: number; updatedAt: number; found: RenderableTemplate }>();

  constructor(
    private readonly orm: MikroORM,
    options: TemplatesOptions,
  ) {
    this.media = { reachability: options.reachability ?? httpReachability(options.policy), assets: options.assets ?? NO_ASSETS };
    this.storage = options.storage;
  }

  // --- views -------------------------------------------------------------------------------------

  /** A template as `workspaceId` sees it: §2 schema plus the list-item flags. */
  view(t: Template, workspaceId: string | null) {
    const isOwn = t.workspaceId !== null && t.workspaceId === workspaceId;
    return {
      id: t.id,
      name: t.name,
      description: t.description,
      kind: t.kind,
      width: t.width,
      height: t.height,
      aspectRatio: t.aspectRatio,
      version: t.version,
      fieldGroups: t.fieldGroups,
      fields: t.fields,
      status: t.status,
      visibility: t.visibility,
      canRender: isOwn && t.status === 'published',
      isOwn,
      inLibrary: t.visibility === 'public' && t.status === 'published',
      categoryId: t.categoryId,
      subcategoryId: t.subcategoryId,
      tags: t.tags,
      usageCount: t.usageCount,
      previewUrl: t.previewKey ? this.storage.url(t.previewKey) : null,
      createdAt: t.createdAt.toISOString(),
      updatedAt: t.updatedAt.toISOString(),
      publishedAt: t.publishedAt?.toISOString() ?? null,
    };
  }

  /** The retrieve answer: the view and the edit spec. */
  detail(t: Template, workspaceId: string | null) {
    return { ...this.view(t, workspaceId), edit: t.edit };
  }

  /** The answer of duplicate and import (§2 "Duplicate response data"). */
  summary(t: Template) {
    return { id: t.id, name: t.name, status: t.status, visibility: t.visibility, version: t.version };
  }

  categories() {
    return TEMPLATE_CATEGORIES;
  }

  // --- reads -------------------------------------------------------------------------------------

  /**
   * §4.2 list: the workspace's templates (status filter applies to them; archived ones only when
   * asked for) and the library (public and published), by `scope`.
   */
  async list(workspaceId: string, q: ListQuery<TemplateSort>, opts: { orderGiven?: boolean } = {}): Promise<{ rows: Template[]; total: number }> {
    const scope = q.sets.scope ?? ['mine', 'library'];
    const statuses = (q.sets.status ?? ['draft', 'published']) as TemplateStatus[];
    const own: FilterQuery<Template> = { workspaceId, status: { $in: statuses } };
    const library: FilterQuery<Template> = { visibility: 'public', status: 'published' };
    const parts = [...(scope.includes('mine') ? [own] : []), ...(scope.includes('library') ? [library] : [])];
    const and: FilterQuery<Template>[] = [parts.length === 1 ? (parts[0] as FilterQuery<Template>) : { $or: parts }];
    if (q.sets.kind) and.push({ kind: { $in: q.sets.kind as TemplateKind[] } });
    if (q.sets.categoryId) and.push({ categoryId: { $in: q.sets.categoryId } });
    if (q.search) and.push({ searchText: { $like: likeTerm(q.search) } });
    const sort = SORTS[q.sort];
    const order = opts.orderGiven ? q.order : sort.order;
    const [rows, total] = await forWorkspace(this.orm, workspaceId).findAndCount(Template, { $and: and }, {
      orderBy: [{ [sort.column]: order }, { id: order }] as never,
      limit: q.limit,
      offset: q.offset,
    });
    return { rows, total };
  }

  /** A template the workspace may read (the filter: its own, any status, or one in the library); else 404. */
  async get(workspaceId: string, id: string): Promise<Template> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(Template, { id });
    if (!row) throw notFound(id);
    return row;
  }

  /** One of the workspace's own templates; another workspace's (public or not) answers 404. */
  async getOwn(workspaceId: string, id: string, em: EntityManager = forWorkspace(this.orm, workspaceId)): Promise<Template> {
    const row = await em.findOne(Template, { id, workspaceId });
    if (!row) throw notFound(id);
    return row;
  }

  // --- for the renders module --------------------------------------------------------------------

  /**
   * The template a render names (§3, §7): 404 TEMPLATE_NOT_FOUND when it does not exist or is another
   * workspace's private template; 403 TEMPLATE_NOT_OWNED for a library template not copied, or
   * another workspace's public one; 409 TEMPLATE_NOT_PUBLISHED for an own draft or archived one.
   * A dashboard preview (`preview`: a free, watermarked still that is not one of the workspace's
   * renders) may draw any template the workspace can read: a library one before it is copied, a draft
   * before it is published (issue 29, decisions.md "Dashboard (issue 29): the team").
   */
  async findForRender(workspaceId: string, templateId: string, opts: { preview?: boolean } = {}): Promise<RenderableTemplate> {
    // The workspace's own published template: its status and version read afresh, its content (edit,
    // fields) reused while both version and write time are those it was read at. Anything else
    // (another workspace's, the library's, a draft, none) takes the full read and its refusals below.
    const head = await RENDER_HEAD.one(this.orm.em, { id: templateId, workspaceId });
    if (head?.status === 'published') {
      const cached = this.forRender.get(templateId);
      if (cached && cached.version === head.version && cached.updatedAt === head.updated_at.getTime() && cached.found.template.workspaceId === workspaceId) return cached.found;
    }
    const row = await this.get(workspaceId, templateId);
    if (opts.preview) return { template: row, edit: row.edit, fields: row.fields };
    if (row.workspaceId !== workspaceId) {
      const whose = row.workspaceId === null ? 'is in the shared library' : 'belongs to another workspace';
      throw new ApiError('TEMPLATE_NOT_OWNED', `Template ${templateId} ${whose}; copy it (POST /v1/templates/${templateId}/duplicate), publish the copy and render that`);
    }
    if (row.status !== 'published') {
      throw new ApiError('TEMPLATE_NOT_PUBLISHED', `Template ${templateId} is ${row.status === 'draft' ? 'a draft' : 'archived'}; publish it before rendering`);
    }
    const found = { template: row, edit: row.edit, fields: row.fields };
    this.forRender.delete(templateId);
    if (this.forRender.size >= RENDER_CACHE_SIZE) this.forRender.delete(this.forRender.keys().next().value as string);
    this.forRender.set(templateId, { version: row.version, updatedAt: row.updatedAt.getTime(), found });
    return found;
  }

  /**
   * Counts one render of a template (the `popular` sort), by its key: one the render resolved through
   * `findForRender` (its workspace's own). Pass the render's transaction manager to count it
   * atomically with it.
   */
  async recordUsage(templateId: string, em: EntityManager = this.orm.em): Promise<void> {
    await RECORD_USAGE.run(em, { id: templateId });
  }

  // --- writes ------------------------------------------------------------------------------------

  /** Decisions.md "Template import": a private draft; fields derived from the placeholders when absent. */
  async import(workspaceId: string, plan: Plan, input: NewTemplateInput): Promise<Template> {
    return this.insertFrom(workspaceId, plan, tidyTemplateInput(input), 'import');
  }

  /** Dashboard: a new draft (private unless `visibility` says public: an owner's). */
  async create(workspaceId: string, plan: Plan, input: NewTemplateInput, writer: TemplateWriter): Promise<Template> {
    assertMayShare(writer, input.visibility, 'create');
    return this.insertFrom(workspaceId, plan, tidyTemplateInput(input), 'create');
  }

  /**
   * §3 duplicate: a private draft copy in the workspace, version 1, usage and review history cleared,
   * counted against the plan's template allowance.
   */
  async duplicate(workspaceId: string, plan: Plan, id: string): Promise<Template> {
    const source = await this.get(workspaceId, id);
    return this.insertCounted(workspaceId, plan, {
      id: newId('template'),
      workspaceId,
      name: source.workspaceId === workspaceId ? `${source.name} (copy)`.slice(0, 120) : source.name,
      description: source.description,
      kind: source.kind,
      width: source.width,
      height: source.height,
      aspectRatio: source.aspectRatio,
      edit: source.edit,
      fields: source.fields,
      fieldGroups: source.fieldGroups,
      version: 1,
      status: 'draft',
      visibility: 'private',
      categoryId: source.categoryId,
      subcategoryId: source.subcategoryId,
      tags: source.tags,
      searchText: source.searchText,
      usageCount: 0,
      previewKey: source.previewKey,
      sourceTemplateId: source.id,
      review: null,
      publishedAt: null,
    });
  }

  /**
   * Dashboard save: `version` must be the current one (else 409 TEMPLATE_STALE); a successful save
   * bumps it. A published template stays published only if the change passes the review again. A
   * template public after the save is an owner's to save (making it private is anyone's).
   */
  async update(workspaceId: string, id: string, body: TemplateUpdateInput, writer: TemplateWriter): Promise<Template> {
    const input = tidyTemplateInput(body);
    const given = input.version;
    const em = forWorkspace(this.orm, workspaceId);
    const row = await this.getOwn(workspaceId, id, em);
    assertMayShare(writer, (input.visibility ?? row.visibility) as TemplateVisibility, 'save');
    if (row.version !== given) throw stale(id, row.version, given);

    const contentChanged = input.edit !== undefined || input.fields !== undefined || input.fieldGroups !== undefined;
    const categoryId = (input.categoryId !== undefined ? input.categoryId : row.categoryId) ?? null;
    const subcategoryId = (input.subcategoryId !== undefined ? input.subcategoryId : input.categoryId !== undefined && input.categoryId !== row.categoryId ? null : row.subcategoryId) ?? null;
    const category = categoryProblem(categoryId, subcategoryId, false);
    if (category) throw new ApiError('INVALID_CATEGORY', `Invalid category: ${category}`, { errors: { [input.subcategoryId !== undefined && categoryId ? 'subcategoryId' : 'categoryId']: [category] } });

    let content = { edit: row.edit, fields: row.fields, fieldGroups: row.fieldGroups, geometry: { kind: row.kind, width: row.width, height: row.height, aspectRatio: row.aspectRatio } as TemplateGeometry };
    if (contentChanged) {
      const rawFields = input.fields !== undefined ? input.fields : row.fields;
      const rawGroups = input.fieldGroups !== undefined ? input.fieldGroups : input.fields !== undefined ? undefined : row.fieldGroups;
      content = this.checkContent({ ...input, edit: input.edit ?? row.edit, fields: rawFields, fieldGroups: rawGroups }, false);
    }
    const next = {
      name: input.name ?? row.name,
      description: (input.description !== undefined ? input.description : row.description) ?? null,
      tags: input.tags ?? row.tags,
      visibility: (input.visibility ?? row.visibility) as TemplateVisibility,
      categoryId,
      subcategoryId,
    };
    let review: TemplateReview | null = row.review ?? null;
    if (row.status === 'published' && (contentChanged || input.categoryId !== undefined || input.subcategoryId !== undefined)) {
      const result = await reviewTemplate({ workspaceId, edit: content.edit, fields: content.fields, categoryId, subcategoryId }, this.media);
      refuseFailed(result, 'The change would make this published template fail its review; it was not saved');
      review = { at: new Date().toISOString(), ...result };
    }
    const changed = await em.nativeUpdate(Template, { id, version: given }, {
      ...next,
      kind: content.geometry.kind,
      width: content.geometry.width,
      height: content.geometry.height,
      aspectRatio: content.geometry.aspectRatio,
      edit: content.edit,
      fields: content.fields,
      fieldGroups: content.fieldGroups,
      searchText: searchText(next),
      review,
      version: given + 1,
      updatedAt: new Date(),
    });
    if (changed === 0) {
      const now = await this.getOwn(workspaceId, id);
      throw stale(id, now.version, given);
    }
    return this.getOwn(workspaceId, id);
  }

  /**
   * Runs the review and publishes (§3 draft → published; an archived template comes back the same
   * way), writing `template.published` {id, name, version} to the outbox in the same transaction. A
   * failed review is kept as the template's last review and answers 422 INVALID_CATEGORY (category
   * check) or NOT_PUBLISHABLE, both with `checks`. Publishing a published template changes nothing.
   * Publishing a public template puts it in the shared library: an owner's (403 ROLE_REQUIRED).
   */
  async publish(workspaceId: string, id: string, writer: TemplateWriter, opts: { version?: number } = {}): Promise<{ template: Template; changed: boolean }> {
    const row = await this.getOwn(workspaceId, id);
    assertMayShare(writer, row.visibility as TemplateVisibility, 'publish');
    return this.publishRow(() => forWorkspace(this.orm, workspaceId), row, opts);
  }

  /** publish for the operator's CLI: any template by id, the library's included. */
  async publishAny(id: string): Promise<{ template: Template; changed: boolean }> {
    const scope = () => allWorkspaces(this.orm);
    return this.publishRow(scope, await this.byId(scope(), id), {});
  }

  /** Archives a template: it leaves the library and can no longer be rendered; publishing brings it back. */
  async archive(workspaceId: string, id: string): Promise<{ template: Template; changed: boolean }> {
    return this.archiveRow(() => forWorkspace(this.orm, workspaceId), await this.getOwn(workspaceId, id));
  }

  /** archive for the operator's CLI: any template by id, the library's included. */
  async archiveAny(id: string): Promise<{ template: Template; changed: boolean }> {
    const scope = () => allWorkspaces(this.orm);
    return this.archiveRow(scope, await this.byId(scope(), id));
  }

  // --- library -----------------------------------------------------------------------------------

  /**
   * Upserts the shared library (API start): inserts missing templates published and public, and
   * updates those whose content changed since (bumping their version). Status and usage are kept,
   * so an operator's archive survives a restart. Safe with several processes starting at once.
   */
  async seedLibrary(seeds: readonly LibrarySeed[]): Promise<{ inserted: number; updated: number }> {
    // The library is no workspace's (workspaceId null): seeding writes outside every workspace.
    const em = allWorkspaces(this.orm);
    const existing = new Map((await em.find(Template, { id: { $in: seeds.map((s) => s.id) } })).map((t) => [t.id, t]));
    let inserted = 0;
    let updated = 0;
    for (const seed of seeds) {
      const checked = checkTemplateEdit(seed.edit, seed.fields, `library.${seed.id}.edit`);
      if (!checked.ok) throw new Error(`Library template ${seed.id} is not valid: ${JSON.stringify(checked.errors)}`);
      const content = {
        name: seed.name, description: seed.description, categoryId: seed.categoryId, subcategoryId: seed.subcategoryId, tags: seed.tags,
        edit: seed.edit, fields: seed.fields, fieldGroups: seed.fieldGroups, ...checked.geometry, searchText: searchText(seed),
        previewKey: seed.previewKey ?? null,
      };
      const row = existing.get(seed.id);
      if (!row) {
        const now = new Date();
        try {
          await em.fork().insert(Template, {
            id: seed.id, workspaceId: null, ...content, version: 1, status: 'published', visibility: 'public', usageCount: 0,
            sourceTemplateId: null, review: null, createdAt: now, updatedAt: now, publishedAt: now,
          });
          inserted++;
        } catch (err) {
          if (!(err instanceof UniqueConstraintViolationException)) throw err;
        }
        continue;
      }
      const before = canonical([row.name, row.description, row.categoryId, row.subcategoryId, row.tags, row.edit, row.fields, row.fieldGroups]);
      const after = canonical([content.name, content.description, content.categoryId, content.subcategoryId, content.tags, content.edit, content.fields, content.fieldGroups]);
      if (before === after) {
        if (row.previewKey !== content.previewKey) await em.nativeUpdate(Template, { id: seed.id, workspaceId: null }, { previewKey: content.previewKey });
        continue;
      }
      await em.nativeUpdate(Template, { id: seed.id, workspaceId: null, version: row.version }, { ...content, version: row.version + 1, updatedAt: new Date() });
      updated++;
    }
    return { inserted, updated };
  }

  // --- internals ---------------------------------------------------------------------------------

  private async byId(em: EntityManager, id: string): Promise<Template> {
    const row = await em.findOne(Template, { id });
    if (!row) throw notFound(id);
    return row;
  }

  /** `scope` makes a fresh entity manager of the caller's scope (a fork per step: none reads another's cached row). */
  private async publishRow(scope: () => EntityManager, row: Template, opts: { version?: number }): Promise<{ template: Template; changed: boolean }> {
    if (opts.version !== undefined && opts.version !== row.version) throw stale(row.id, row.version, opts.version);
    if (row.status === 'published') return { template: row, changed: false };
    const result = await reviewTemplate(row, this.media);
    const review: TemplateReview = { at: new Date().toISOString(), ...result };
    const where = { id: row.id, workspaceId: row.workspaceId, version: row.version, status: row.status };
    if (!result.passed) {
      await scope().nativeUpdate(Template, where, { review });
      refuseFailed(result, 'The template is not ready to publish');
    }
    const now = new Date();
    await scope().transactional(async (em) => {
      const changed = await em.nativeUpdate(Template, where, { status: 'published', publishedAt: now, review, updatedAt: now });
      if (changed === 0) {
        const current = await em.findOne(Template, { id: row.id });
        throw stale(row.id, current?.version ?? row.version, row.version);
      }
      if (row.workspaceId) await writeEvent(em, row.workspaceId, 'template.published', { id: row.id, name: row.name, version: row.version }, { mode: 'live' });
    });
    return { template: await this.byId(scope(), row.id), changed: true };
  }

  private async archiveRow(scope: () => EntityManager, row: Template): Promise<{ template: Template; changed: boolean }> {
    if (row.status === 'archived') return { template: row, changed: false };
    await scope().nativeUpdate(Template, { id: row.id }, { status: 'archived', updatedAt: new Date() });
    return { template: await this.byId(scope(), row.id), changed: true };
  }

  /**
   * The content of an import or create, checked: field definitions (given, or derived from the
   * placeholders), the edit with the fields' stand-ins merged in, and `kind` against the output
   * format. Failures answer 422 TEMPLATE_VALIDATION_FAILED (`errors` by path) or EMPTY_TIMELINE.
   */
  private checkContent(input: TemplateInput, derive: boolean): { edit: Record<string, JsonValue>; fields: FieldDefinition[]; fieldGroups: string[]; geometry: TemplateGeometry } {
    const issues = new Issues();
    const edit = input.edit as Record<string, JsonValue>;
    const schema = input.fields === undefined && derive ? deriveFields(edit) : readFieldDefinitions(input.fields ?? [], input.fieldGroups, issues);
    const parsed = checkTemplateEdit(edit, schema.fields);
    if (!parsed.ok) Object.entries(parsed.errors).forEach(([path, messages]) => messages.forEach((m) => issues.add(path, m)));
    else if (input.kind && input.kind !== parsed.geometry.kind) {
      issues.add('kind', `is ${input.kind}, but edit.output.format "${parsed.edit.output.format}" makes ${parsed.geometry.kind === 'image' ? 'an image' : 'a video'}`);
    }
    if (!parsed.ok || !issues.empty) throw new ApiError('TEMPLATE_VALIDATION_FAILED', `The template is not valid: ${issues.summary()}`, { errors: issues.errors });
    if (parsed.empty) throw new ApiError('EMPTY_TIMELINE', 'The timeline has no clips, so it has no duration');
    return { edit, fields: schema.fields, fieldGroups: schema.fieldGroups, geometry: parsed.geometry };
  }

  private async insertFrom(workspaceId: string, plan: Plan, input: NewTemplateInput, mode: InputMode): Promise<Template> {
    const categoryId = input.categoryId ?? null;
    const subcategoryId = input.subcategoryId ?? null;
    const category = categoryProblem(categoryId, subcategoryId, false);
    if (category) throw new ApiError('INVALID_CATEGORY', `Invalid category: ${category}`, { errors: { [categoryId && subcategoryId ? 'subcategoryId' : 'categoryId']: [category] } });
    const content = this.checkContent(input, true);
    const meta = { name: input.name, description: input.description ?? null, tags: input.tags ?? [] };
    return this.insertCounted(workspaceId, plan, {
      id: newId('template'),
      workspaceId,
      ...meta,
      ...content.geometry,
      edit: content.edit,
      fields: content.fields,
      fieldGroups: content.fieldGroups,
      version: 1,
      status: 'draft',
      visibility: mode === 'create' ? (input.visibility ?? 'private') : 'private',
      categoryId,
      subcategoryId,
      searchText: searchText(meta),
      usageCount: 0,
      previewKey: null,
      sourceTemplateId: null,
      review: null,
      publishedAt: null,
    });
  }

  /**
   * Inserts a new template of the workspace when the plan's template allowance has room (402
   * LIMIT_TEMPLATES otherwise): the count and the insert run under the workspace's lock, so
   * concurrent imports or copies cannot overshoot it.
   */
  private insertCounted(workspaceId: string, plan: Plan, data: RequiredEntityData<Template>): Promise<Template> {
    return underWorkspaceLock(this.orm, workspaceId, async (em) => {
      await this.allowance(em, workspaceId, plan);
      const row = em.create(Template, data);
      await em.flush();
      return row;
    });
  }

  /** §8 template count: the workspace's templates that are not archived, against the plan's ceiling (402 LIMIT_TEMPLATES). */
  private async allowance(em: EntityManager, workspaceId: string, plan: Plan): Promise<void> {
    // workspaceId named: the filter lets this workspace read the library's templates too.
    const count = await em.count(Template, { workspaceId, status: { $ne: 'archived' } });
    if (count >= plan.templateCount) {
      throw new ApiError('LIMIT_TEMPLATES', `The ${plan.name} plan allows ${plan.templateCount} templates and the workspace has ${count}; archive one or change plan`);
    }
  }
}

/** A failed review as its error: INVALID_CATEGORY when the category check failed, else NOT_PUBLISHABLE; both carry `checks`. */
function refuseFailed(review: Review, message: string): void {
  if (review.passed) return;
  const failed = review.checks.filter((c) => !c.passed);
  const category = failed.find((c) => c.name === 'category');
  if (category) {
    const errors: FieldErrors = { categoryId: [category.message] };
    throw new ApiError('INVALID_CATEGORY', `${message}: ${category.message}`, { checks: review.checks, errors });
  }
  throw new ApiError('NOT_PUBLISHABLE', `${message}: ${failed.map((c) => c.message).join('; ')}`, { checks: review.checks });
}
