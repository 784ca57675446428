import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053326 extends Migration {

  override name = 'Migration20261122053326';

  override up(): void | Promise<void> {
    this.addSql(`create table \`render\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`status\` text not null, \`kind\` text not null, \`mode\` text not null, \`template_id\` text null, \`template_version\` integer null, \`format\` text not null, \`width\` integer null, \`height\` integer null, \`duration\` double null, \`fps\` double null, \`scale\` integer not null, \`file_size_bytes\` bigint null, \`render_time\` integer null, \`credits\` integer not null, \`watermarked\` integer not null, \`output_key\` text null, \`poster_key\` text null, \`thumbnail_key\` text null, \`expires_at\` datetime null, \`purged_at\` datetime null, \`error\` json null, \`progress\` double not null, \`cancel_requested\` integer not null, \`metadata\` json null, \`callback\` text null, \`edit\` json not null, \`idempotency_key\` text null, \`request_hash\` text null, \`attempts\` integer not null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`started_at\` datetime null, \`completed_at\` datetime null);`);
    this.addSql(`create index \`render_workspace_id_created_at_index\` on \`render\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create index \`render_status_created_at_index\` on \`render\` (\`status\`, \`created_at\`);`);
    this.addSql(`create index \`render_expires_at_index\` on \`render\` (\`expires_at\`);`);
    this.addSql(`create unique index \`render_workspace_id_idempotency_key_unique\` on \`render\` (\`workspace_id\`, \`idempotency_key\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`render\`;`);
  }

}
