import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053721 extends Migration {

  override name = 'Migration20261122053721';

  override up(): void | Promise<void> {
    this.addSql(`create table \`template\` (\`id\` text not null primary key, \`workspace_id\` text null, \`name\` text not null, \`description\` text null, \`kind\` text not null, \`width\` integer not null, \`height\` integer not null, \`aspect_ratio\` text not null, \`edit\` json not null, \`fields\` json not null, \`field_groups\` json not null, \`version\` integer not null, \`status\` text not null, \`visibility\` text not null, \`category_id\` text null, \`subcategory_id\` text null, \`tags\` json not null, \`search_text\` text not null, \`usage_count\` integer not null, \`preview_url\` text null, \`source_template_id\` text null, \`review\` json null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`published_at\` datetime null);`);
    this.addSql(`create index \`template_workspace_id_status_index\` on \`template\` (\`workspace_id\`, \`status\`);`);
    this.addSql(`create index \`template_visibility_status_index\` on \`template\` (\`visibility\`, \`status\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`template\`;`);
  }

}
