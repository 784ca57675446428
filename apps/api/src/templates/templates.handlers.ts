import { ok, paged, pagination, parseListQuery } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { TEMPLATE_LIST, type NewTemplateInput, type Template, type TemplatesService, type TemplateUpdateInput, type TemplateWriter } from '#libs/templates';

/**
 * The template operations shared by the key routes (/v1/templates) and the dashboard's session
 * routes (/organization/templates): the controllers differ only in how the caller authenticates.
 */
export class TemplateHandlers {
  constructor(private readonly templates: TemplatesService) {}

  async list(workspaceId: string, raw: Record<string, unknown>) {
    const q = parseListQuery(TEMPLATE_LIST, raw);
    const { rows, total } = await this.templates.list(workspaceId, q, { orderGiven: raw.order !== undefined });
    return paged(rows.map((t) => this.templates.view(t, workspaceId)), pagination(q, total));
  }

  async get(workspaceId: string, id: string) {
    return ok(this.templates.detail(await this.templates.get(workspaceId, id), workspaceId));
  }

  categories() {
    return ok(this.templates.categories());
  }

  async duplicate(workspaceId: string, plan: Plan, id: string) {
    const copy = await this.templates.duplicate(workspaceId, plan, id);
    return ok(this.templates.summary(copy), `Template copied into your workspace as ${copy.id}, a private draft; publish it before rendering`);
  }

  async import(workspaceId: string, plan: Plan, body: NewTemplateInput) {
    const row = await this.templates.import(workspaceId, plan, body);
    return ok(this.templates.summary(row), `Design imported as ${row.id}, a private draft with ${row.fields.length} field${row.fields.length === 1 ? '' : 's'}; publish it in the dashboard before rendering`);
  }

  async create(workspaceId: string, plan: Plan, body: NewTemplateInput, writer: TemplateWriter) {
    const row = await this.templates.create(workspaceId, plan, body, writer);
    return ok(this.templates.detail(row, workspaceId), 'Template created as a draft');
  }

  async update(workspaceId: string, id: string, body: TemplateUpdateInput, writer: TemplateWriter) {
    const row = await this.templates.update(workspaceId, id, body, writer);
    return ok(this.templates.detail(row, workspaceId), `Template saved as version ${row.version}`);
  }

  async publish(workspaceId: string, id: string, version: number | undefined, writer: TemplateWriter) {
    const { template, changed } = await this.templates.publish(workspaceId, id, writer, { version });
    return ok(publishView(template), changed ? 'Template published: it can be rendered now' : 'The template was already published');
  }

  async archive(workspaceId: string, id: string) {
    const { template, changed } = await this.templates.archive(workspaceId, id);
    return ok(this.templates.summary(template), changed ? 'Template archived: it can no longer be rendered; publish it to bring it back' : 'The template was already archived');
  }
}

function publishView(t: Template) {
  return {
    id: t.id, name: t.name, status: t.status, visibility: t.visibility, version: t.version,
    publishedAt: t.publishedAt?.toISOString() ?? null, checks: t.review?.checks ?? [],
  };
}
