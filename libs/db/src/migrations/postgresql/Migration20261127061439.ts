import { Migration } from '@mikro-orm/migrations';

export class Migration20261127061439 extends Migration {

  override name = 'Migration20261127061439';

  override up(): void | Promise<void> {
    this.addSql(`create table "messaging_contact" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "wa_id" varchar(16) null, "email" varchar(320) null, "name" varchar(200) null, "first_name" varchar(100) null, "last_name" varchar(100) null, "tags_text" varchar(1000) not null, "opted_in" boolean not null, "blocked" boolean not null, "search_text" varchar(700) not null, "last_messaged_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "messaging_contact" add constraint "messaging_contact_workspace_id_wa_id_unique" unique ("workspace_id", "wa_id");`);
    this.addSql(`alter table "messaging_contact" add constraint "messaging_contact_workspace_id_email_unique" unique ("workspace_id", "email");`);

    this.addSql(`create table "messaging_message" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "channel" varchar(16) not null, "account_id" varchar(64) not null, "recipient" varchar(320) not null, "type" varchar(16) not null, "template_name" varchar(512) null, "language_code" varchar(16) null, "render_id" varchar(32) null, "media_url" text null, "status" varchar(16) not null, "provider_message_id" varchar(200) null, "idempotency_key" varchar(255) null, "created_at" timestamptz not null, "sent_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "messaging_message_workspace_id_created_at_index" on "messaging_message" ("workspace_id", "created_at");`);
    this.addSql(`alter table "messaging_message" add constraint "messaging_message_workspace_id_idempotency_key_unique" unique ("workspace_id", "idempotency_key");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "messaging_contact" cascade;`);
    this.addSql(`drop table if exists "messaging_message" cascade;`);
  }

}
