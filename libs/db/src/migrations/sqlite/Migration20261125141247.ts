import { Migration } from '@mikro-orm/migrations';

export class Migration20261125141247 extends Migration {

  override name = 'Migration20261125141247';

  override up(): void | Promise<void> {
    this.addSql(`create table \`asset\` (\`id\` text not null primary key, \`workspace_id\` text null, \`type\` text not null, \`status\` text not null, \`name\` text not null, \`description\` text null, \`folder\` text null, \`tags\` json not null, \`tags_text\` text not null, \`search_text\` text not null, \`mime_type\` text not null, \`size_bytes\` bigint not null, \`width\` integer null, \`height\` integer null, \`duration_sec\` double null, \`file_key\` text not null, \`upload_key\` text null, \`thumbnail_key\` text null, \`waveform_key\` text null, \`font_family\` text null, \`meta\` json null, \`error\` json null, \`source\` text null, \`licence\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`ready_at\` datetime null);`);
    this.addSql(`create index \`asset_workspace_id_created_at_index\` on \`asset\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create index \`asset_workspace_id_status_index\` on \`asset\` (\`workspace_id\`, \`status\`);`);
    this.addSql(`create index \`asset_status_updated_at_index\` on \`asset\` (\`status\`, \`updated_at\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`asset\`;`);
  }

}
