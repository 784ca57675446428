import { Migration } from '@mikro-orm/migrations';

export class Migration20261125141247 extends Migration {

  override name = 'Migration20261125141247';

  override up(): void | Promise<void> {
    this.addSql(`create table "asset" ("id" varchar(64) not null, "workspace_id" varchar(32) null, "type" varchar(8) not null, "status" varchar(10) not null, "name" varchar(255) not null, "description" text null, "folder" varchar(128) null, "tags" jsonb not null, "tags_text" text not null, "search_text" text not null, "mime_type" varchar(64) not null, "size_bytes" bigint not null, "width" int null, "height" int null, "duration_sec" double precision null, "file_key" text not null, "upload_key" text null, "thumbnail_key" text null, "waveform_key" text null, "font_family" varchar(255) null, "meta" jsonb null, "error" jsonb null, "source" text null, "licence" varchar(64) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "ready_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "asset_workspace_id_created_at_index" on "asset" ("workspace_id", "created_at");`);
    this.addSql(`create index "asset_workspace_id_status_index" on "asset" ("workspace_id", "status");`);
    this.addSql(`create index "asset_status_updated_at_index" on "asset" ("status", "updated_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "asset" cascade;`);
  }

}
