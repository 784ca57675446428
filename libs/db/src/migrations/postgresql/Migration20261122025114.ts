import { Migration } from '@mikro-orm/migrations';

export class Migration20261122025114 extends Migration {

  override name = 'Migration20261122025114';

  override up(): void | Promise<void> {
    this.addSql(`create table "dev_message" ("id" varchar(32) not null, "channel" varchar(10) not null, "recipient" varchar(40) not null, "body" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "dev_message_recipient_index" on "dev_message" ("recipient");`);

    this.addSql(`create table "membership" ("id" varchar(40) not null, "user_id" varchar(32) not null, "workspace_id" varchar(32) not null, "role" varchar(8) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "membership_user_id_index" on "membership" ("user_id");`);
    this.addSql(`create index "membership_workspace_id_index" on "membership" ("workspace_id");`);
    this.addSql(`alter table "membership" add constraint "membership_user_id_workspace_id_unique" unique ("user_id", "workspace_id");`);

    this.addSql(`create table "otp_code" ("id" varchar(32) not null, "phone" varchar(20) not null, "code_hash" varchar(64) not null, "attempts" int not null, "expires_at" timestamptz not null, "closed_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "otp_code_phone_index" on "otp_code" ("phone");`);

    this.addSql(`create table "refresh_token" ("id" varchar(32) not null, "user_id" varchar(32) not null, "family_id" varchar(32) not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "rotated_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "refresh_token_user_id_index" on "refresh_token" ("user_id");`);
    this.addSql(`create index "refresh_token_family_id_index" on "refresh_token" ("family_id");`);
    this.addSql(`alter table "refresh_token" add constraint "refresh_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "app_user" ("id" varchar(32) not null, "phone" varchar(20) not null, "name" varchar(200) null, "session_epoch" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_phone_unique" unique ("phone");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "dev_message" cascade;`);
    this.addSql(`drop table if exists "membership" cascade;`);
    this.addSql(`drop table if exists "otp_code" cascade;`);
    this.addSql(`drop table if exists "refresh_token" cascade;`);
    this.addSql(`drop table if exists "app_user" cascade;`);
  }

}
