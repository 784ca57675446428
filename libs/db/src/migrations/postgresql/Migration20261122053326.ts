import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053326 extends Migration {

  override name = 'Migration20261122053326';

  override up(): void | Promise<void> {
    this.addSql(`create table "render" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "status" varchar(12) not null, "kind" varchar(8) not null, "mode" varchar(8) not null, "template_id" varchar(64) null, "template_version" int null, "format" varchar(8) not null, "width" int null, "height" int null, "duration" double precision null, "fps" double precision null, "scale" int not null, "file_size_bytes" bigint null, "render_time" int null, "credits" int not null, "watermarked" boolean not null, "output_key" text null, "poster_key" text null, "thumbnail_key" text null, "expires_at" timestamptz null, "purged_at" timestamptz null, "error" jsonb null, "progress" double precision not null, "cancel_requested" boolean not null, "metadata" jsonb null, "callback" text null, "edit" jsonb not null, "idempotency_key" varchar(255) null, "request_hash" varchar(64) null, "attempts" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "started_at" timestamptz null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "render_workspace_id_created_at_index" on "render" ("workspace_id", "created_at");`);
    this.addSql(`create index "render_status_created_at_index" on "render" ("status", "created_at");`);
    this.addSql(`create index "render_expires_at_index" on "render" ("expires_at");`);
    this.addSql(`alter table "render" add constraint "render_workspace_id_idempotency_key_unique" unique ("workspace_id", "idempotency_key");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "render" cascade;`);
  }

}
