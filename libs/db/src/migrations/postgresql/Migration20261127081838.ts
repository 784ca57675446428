import { Migration } from '@mikro-orm/migrations';

export class Migration20261127081838 extends Migration {

  override name = 'Migration20261127081838';

  override up(): void | Promise<void> {
    this.addSql(`create table "messaging_campaign_recipient" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "campaign_id" varchar(32) not null, "position" int not null, "recipient" varchar(320) not null, "name" varchar(200) null, "variables" jsonb null, "status" varchar(16) not null, "error_code" varchar(48) null, "reason" text null, "provider_message_id" varchar(200) null, "message_id" varchar(32) null, "claimed_by" varchar(64) null, "attempts" int not null, "updated_at" timestamptz not null, "sent_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "messaging_campaign_recipient_campaign_id_status_index" on "messaging_campaign_recipient" ("campaign_id", "status");`);
    this.addSql(`alter table "messaging_campaign_recipient" add constraint "messaging_campaign_recipient_campaign_id_position_unique" unique ("campaign_id", "position");`);

    this.addSql(`create table "messaging_campaign" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "name" varchar(200) not null, "channel" varchar(16) not null, "template_name" varchar(512) not null, "language_code" varchar(16) null, "render_id" varchar(32) null, "media_url" text null, "common_variables" jsonb not null, "rate_limit_per_second" int not null, "total" int not null, "status" varchar(16) not null, "idempotency_key" varchar(255) null, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "messaging_campaign_workspace_id_created_at_index" on "messaging_campaign" ("workspace_id", "created_at");`);
    this.addSql(`alter table "messaging_campaign" add constraint "messaging_campaign_workspace_id_idempotency_key_unique" unique ("workspace_id", "idempotency_key");`);

    this.addSql(`alter table "messaging_message" add "error" text null, add "status_at" timestamptz null;`);
    this.addSql(`create index "messaging_message_workspace_id_provider_message_id_index" on "messaging_message" ("workspace_id", "provider_message_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "messaging_campaign_recipient" cascade;`);
    this.addSql(`drop table if exists "messaging_campaign" cascade;`);

    this.addSql(`drop index "messaging_message_workspace_id_provider_message_id_index";`);
    this.addSql(`alter table "messaging_message" drop column "error", drop column "status_at";`);
  }

}
