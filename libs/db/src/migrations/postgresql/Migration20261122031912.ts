import { Migration } from '@mikro-orm/migrations';

export class Migration20261122031912 extends Migration {

  override name = 'Migration20261122031912';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_attempt" ("id" varchar(48) not null, "delivery_id" varchar(32) not null, "attempt" int not null, "status" int null, "error" text null, "duration_ms" int not null, "signed_at" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_attempt_delivery_id_index" on "webhook_attempt" ("delivery_id");`);
    this.addSql(`alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_attempt_unique" unique ("delivery_id", "attempt");`);

    this.addSql(`create table "webhook_delivery" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "endpoint_id" varchar(32) not null, "event_id" varchar(40) not null, "event_type" varchar(40) not null, "sequence" int not null, "test" boolean not null, "event" jsonb not null, "state" varchar(10) not null, "attempts" int not null, "last_status" int null, "last_error" text null, "last_duration_ms" int null, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_endpoint_id_id_index" on "webhook_delivery" ("endpoint_id", "id");`);
    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_endpoint_id_event_id_sequence_unique" unique ("endpoint_id", "event_id", "sequence");`);

    this.addSql(`create table "webhook_endpoint" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "url" text not null, "description" varchar(200) null, "events" jsonb not null, "method" varchar(6) not null, "body_format" varchar(10) not null, "payload_mode" varchar(8) not null, "payload_template" text null, "headers" jsonb not null, "secret_sealed" text not null, "secret_hint" varchar(20) not null, "is_active" boolean not null, "disabled_at" timestamptz null, "consecutive_failures" int not null, "last_success_at" timestamptz null, "last_failure_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_endpoint_workspace_id_index" on "webhook_endpoint" ("workspace_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhook_attempt" cascade;`);
    this.addSql(`drop table if exists "webhook_delivery" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoint" cascade;`);
  }

}
