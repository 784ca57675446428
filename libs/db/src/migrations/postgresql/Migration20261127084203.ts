import { Migration } from '@mikro-orm/migrations';

export class Migration20261127084203 extends Migration {

  override name = 'Migration20261127084203';

  override up(): void | Promise<void> {
    this.addSql(`create table "workflow" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "name" varchar(200) not null, "search_text" varchar(200) not null, "definition" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "workflow_workspace_id_created_at_index" on "workflow" ("workspace_id", "created_at");`);

    this.addSql(`create table "workflow_row" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "run_id" varchar(32) not null, "position" int not null, "sheet_row" int null, "values" jsonb not null, "status" varchar(16) not null, "render_id" varchar(32) null, "output_url" text null, "steps" jsonb not null, "error" jsonb null, "attempts" int not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "workflow_row_workspace_id_run_id_position_index" on "workflow_row" ("workspace_id", "run_id", "position");`);
    this.addSql(`create index "workflow_row_run_id_status_index" on "workflow_row" ("run_id", "status");`);

    this.addSql(`create table "workflow_run" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "workflow_id" varchar(32) not null, "status" varchar(16) not null, "definition" jsonb not null, "mode" varchar(8) not null, "plan_code" varchar(16) not null, "headers" jsonb null, "total_rows" int not null, "round" int not null, "cancel_requested" boolean not null, "created_at" timestamptz not null, "started_at" timestamptz null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "workflow_run_workspace_id_workflow_id_created_at_index" on "workflow_run" ("workspace_id", "workflow_id", "created_at");`);
    this.addSql(`create index "workflow_run_workspace_id_created_at_index" on "workflow_run" ("workspace_id", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "workflow" cascade;`);
    this.addSql(`drop table if exists "workflow_row" cascade;`);
    this.addSql(`drop table if exists "workflow_run" cascade;`);
  }

}
