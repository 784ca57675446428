import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021141 extends Migration {

  override name = 'Migration20261122021141';

  override up(): void | Promise<void> {
    this.addSql(`create table "api_key" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "mode" varchar(4) not null, "name" varchar(200) null, "hash" varchar(64) not null, "hint" varchar(40) not null, "scopes" jsonb not null, "ip_allowlist" jsonb not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "api_key_workspace_id_index" on "api_key" ("workspace_id");`);
    this.addSql(`alter table "api_key" add constraint "api_key_hash_unique" unique ("hash");`);

    this.addSql(`create table "workspace" ("id" varchar(32) not null, "name" varchar(200) not null, "plan" varchar(20) not null, "suspended_at" timestamptz null, "callback_secret_sealed" text not null, "default_callback_url" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "api_key" cascade;`);
    this.addSql(`drop table if exists "workspace" cascade;`);
  }

}
