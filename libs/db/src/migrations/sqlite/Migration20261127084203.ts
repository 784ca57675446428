import { Migration } from '@mikro-orm/migrations';

export class Migration20261127084203 extends Migration {

  override name = 'Migration20261127084203';

  override up(): void | Promise<void> {
    this.addSql(`create table \`workflow\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`name\` text not null, \`search_text\` text not null, \`definition\` json not null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`workflow_workspace_id_created_at_index\` on \`workflow\` (\`workspace_id\`, \`created_at\`);`);

    this.addSql(`create table \`workflow_row\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`run_id\` text not null, \`position\` integer not null, \`sheet_row\` integer null, \`values\` json not null, \`status\` text not null, \`render_id\` text null, \`output_url\` text null, \`steps\` json not null, \`error\` json null, \`attempts\` integer not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`workflow_row_workspace_id_run_id_position_index\` on \`workflow_row\` (\`workspace_id\`, \`run_id\`, \`position\`);`);
    this.addSql(`create index \`workflow_row_run_id_status_index\` on \`workflow_row\` (\`run_id\`, \`status\`);`);

    this.addSql(`create table \`workflow_run\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`workflow_id\` text not null, \`status\` text not null, \`definition\` json not null, \`mode\` text not null, \`plan_code\` text not null, \`headers\` json null, \`total_rows\` integer not null, \`round\` integer not null, \`cancel_requested\` integer not null, \`created_at\` datetime not null, \`started_at\` datetime null, \`completed_at\` datetime null);`);
    this.addSql(`create index \`workflow_run_workspace_id_workflow_id_created_at_index\` on \`workflow_run\` (\`workspace_id\`, \`workflow_id\`, \`created_at\`);`);
    this.addSql(`create index \`workflow_run_workspace_id_created_at_index\` on \`workflow_run\` (\`workspace_id\`, \`created_at\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`workflow\`;`);
    this.addSql(`drop table if exists \`workflow_row\`;`);
    this.addSql(`drop table if exists \`workflow_run\`;`);
  }

}
